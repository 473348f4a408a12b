import HearthCore
import HearthProtocol
import HearthSupport

/// The console (docs/console.md): its pages under `/console/`, its sign-in sessions, its API under
/// `/console/api/` (docs/console-api.md) and the usage history its charts draw. It owns that state and
/// its once-a-second work (``tick(now:)``); what it shows and changes it reaches through the server's
/// parts (namespaces, credentials, metrics, Auth). Made by ``DatabaseServer``, which routes to it
/// (the "console" route) and asks it who a console cookie makes its bearer. Loop thread only.
final class Console {
    unowned let server: DatabaseServer
    /// The pages (nil when their files are missing beside the binary).
    let assets: StaticSite? = ConsoleAssets.directory().flatMap { StaticSite(directory: $0) }
    /// Signed-in browsers and the printed sign-in link.
    var sessions: ConsoleSessions
    /// The usage charts' minute, hour and day points.
    var usage: UsageHistory

    init(server: DatabaseServer, now: Int64) {
        self.server = server
        sessions = ConsoleSessions(now: now)
        usage = UsageHistory(startingAt: server.metrics.startedAt)
    }

    /// Once a second: a usage point, and the streams of sessions that ended closed.
    func tick(now: Int64) {
        recordUsage(now: now)
        endStreamsOfEndedSessions(now: now)
    }

    // What the console reaches of the server.
    var configuration: ServerConfiguration { server.configuration }
    var namespaces: NamespaceRegistry { server.namespaces }
    var credentials: Credentials { server.credentials }
    var metrics: ServerMetrics { server.metrics }
    var identity: (any IdentityService)? { server.identity }
    var log: Log { server.log }
    func clock() -> Int64 { server.clock() }
}
