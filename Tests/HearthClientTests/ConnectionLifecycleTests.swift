import Foundation
import Testing
@testable import HearthClient

/// The client connection's decisions, without a server and on a clock the test moves: what is asked
/// for, opened, sent and scheduled at each step, and how reconnection backs off.
@Suite struct ConnectionLifecycleTests {
    typealias Action = ConnectionLifecycle.Action

    /// A lifecycle whose every reconnect wait is half the delay (the random number is always 0.5).
    func lifecycle(signedIn: Bool = true) -> ConnectionLifecycle {
        var machine = ConnectionLifecycle(backoff: ReconnectBackoff(minimum: 1, maximum: 30), random: { 0.5 })
        machine.hasTokenProvider = signedIn
        return machine
    }

    @Test func aSignedInConnectionAuthenticatesBeforeAnythingElseIsSent() {
        var machine = lifecycle()
        #expect(machine.open() == [.requestToken(forceRefresh: false, attempt: 1)])
        #expect(machine.phase == .gettingToken(attempt: 1))
        #expect(!machine.canSend)
        #expect(machine.tokenArrived("t1", attempt: 1, now: 0) == [.openTransport(attempt: 1)])
        #expect(machine.handshake(serverTime: 5_000, attempt: 1, now: 1) == [
            .startKeepalive, .sendStats, .sendAuth("t1", attempt: 1), .ready(serverTime: 5_000), .restoreState,
        ])
        #expect(machine.phase == .authenticating(attempt: 1) && machine.canSend)
        #expect(machine.authAnswered(ok: true, attempt: 1, now: 1).isEmpty)
        #expect(machine.phase == .connected(attempt: 1))
        // Stats go out once per client, not once per connection.
        _ = machine.transportClosed(attempt: 1, now: 100)
        _ = machine.reconnectDue()
        _ = machine.tokenArrived("t2", attempt: 2, now: 101)
        #expect(!machine.handshake(serverTime: 0, attempt: 2, now: 102).contains(.sendStats))
    }

    @Test func withoutAUserTheHandshakeMakesItConnected() {
        var machine = lifecycle(signedIn: false)
        #expect(machine.open() == [.openTransport(attempt: 1)])
        #expect(machine.handshake(serverTime: 1, attempt: 1, now: 0) == [.startKeepalive, .sendStats, .ready(serverTime: 1), .restoreState])
        #expect(machine.phase == .connected(attempt: 1))
    }

    @Test func aTokenThatChangesWhileConnectingIsFetchedAgainAndSentFirst() {
        var machine = lifecycle(signedIn: false)
        _ = machine.open()
        // The app's Auth arrives (or a user signs in) while the socket opens.
        machine.hasTokenProvider = true
        #expect(machine.tokenChanged().isEmpty)
        #expect(machine.handshake(serverTime: 7, attempt: 1, now: 0) == [
            .startKeepalive, .sendStats, .ready(serverTime: 7), .requestToken(forceRefresh: false, attempt: 1),
        ])
        #expect(!machine.canSend)  // nothing may go before the auth
        #expect(machine.tokenArrived("fresh", attempt: 1, now: 0) == [.sendAuth("fresh", attempt: 1), .restoreState])
        #expect(machine.canSend)
        #expect(machine.authAnswered(ok: true, attempt: 1, now: 0).isEmpty)
        #expect(machine.phase == .connected(attempt: 1))
    }

    @Test func aLiveConnectionSendsANewTokenOrDropsItsAuth() {
        var machine = lifecycle()
        _ = machine.open()
        _ = machine.tokenArrived("t1", attempt: 1, now: 0)
        _ = machine.handshake(serverTime: 0, attempt: 1, now: 0)
        _ = machine.authAnswered(ok: true, attempt: 1, now: 0)
        #expect(machine.tokenChanged() == [.requestToken(forceRefresh: false, attempt: 1)])
        #expect(machine.tokenArrived("t2", attempt: 1, now: 1) == [.sendAuth("t2", attempt: 1)])
        #expect(machine.authAnswered(ok: true, attempt: 1, now: 1).isEmpty)
        #expect(machine.tokenChanged() == [.requestToken(forceRefresh: false, attempt: 1)])
        #expect(machine.tokenArrived(nil, attempt: 1, now: 2) == [.sendUnauth])
        #expect(machine.phase == .connected(attempt: 1))
    }

    @Test func aRefusedTokenReconnectsAskingForAFreshOne() {
        var machine = lifecycle()
        _ = machine.open()
        _ = machine.tokenArrived("stale", attempt: 1, now: 0)
        _ = machine.handshake(serverTime: 0, attempt: 1, now: 0)
        #expect(machine.authAnswered(ok: false, attempt: 1, now: 2) == [
            .closeTransport, .stopKeepalive, .connectionEnded(wasReady: true), .scheduleReconnect(afterSeconds: 0.65),
        ])
        #expect(machine.reconnectDue() == [.requestToken(forceRefresh: true, attempt: 3)])
        // A revoked session (`ac`) does the same.
        _ = machine.tokenArrived("t", attempt: 3, now: 3)
        _ = machine.handshake(serverTime: 0, attempt: 3, now: 3)
        _ = machine.authAnswered(ok: true, attempt: 3, now: 3)
        #expect(machine.authRevoked(now: 4).contains(.closeTransport))
        #expect(machine.reconnectDue() == [.requestToken(forceRefresh: true, attempt: 5)])
    }

    @Test func reconnectionBacksOffAndResetsAfterAHealthyConnection() {
        var machine = lifecycle(signedIn: false)
        var waits: [Double] = []
        _ = machine.open()
        for now in stride(from: 0.0, to: 5, by: 1) {
            // Refused at once, five times: each wait is half of a delay growing by 1.3.
            for case .scheduleReconnect(let seconds) in machine.transportClosed(attempt: machine.currentAttempt, now: now) {
                waits.append(seconds)
            }
            _ = machine.reconnectDue()
        }
        let expected = (1...5).map { 0.5 * pow(1.3, Double($0)) }
        #expect(waits.count == 5 && zip(waits, expected).allSatisfy { abs($0 - $1) < 1e-9 }, "\(waits)")
        #expect(machine.attemptsThatFailed == 5)
        // A connection that lasted 30 s resets the delay.
        _ = machine.handshake(serverTime: 0, attempt: machine.currentAttempt, now: 100)
        let after = machine.transportClosed(attempt: machine.currentAttempt, now: 130)
        #expect(after.contains(.scheduleReconnect(afterSeconds: 0.5)))
        #expect(after.contains(.connectionEnded(wasReady: true)))
        #expect(machine.attemptsThatFailed == 5)
    }

    @Test func goingOfflineCancelsAndStaysClosedUntilResumed() {
        var machine = lifecycle(signedIn: false)
        _ = machine.open()
        _ = machine.handshake(serverTime: 0, attempt: 1, now: 0)
        #expect(machine.interrupt("offline", now: 1) == [.closeTransport, .stopKeepalive, .connectionEnded(wasReady: true)])
        #expect(machine.open().isEmpty)
        #expect(machine.reconnectDue().isEmpty)
        // Events of the socket that was closed are ignored.
        #expect(machine.transportClosed(attempt: 1, now: 2).isEmpty)
        #expect(machine.handshake(serverTime: 0, attempt: 1, now: 2).isEmpty)
        #expect(machine.resume("offline") == [.openTransport(attempt: 3)])
        // Interrupted while waiting to reconnect: the timer is cancelled.
        _ = machine.transportClosed(attempt: 3, now: 3)
        #expect(machine.reconnectScheduled)
        #expect(machine.interrupt("offline", now: 4) == [.cancelReconnect])
        // The server's `s` ends it for good.
        _ = machine.resume("offline")
        _ = machine.serverShutdown(now: 5)
        #expect(machine.resume("offline").isEmpty)
        #expect(machine.phase == .disconnected)
    }

    @Test func keepalivesGoOnlyAfter44SecondsOfSilence() {
        var machine = lifecycle(signedIn: false)
        _ = machine.open()
        _ = machine.handshake(serverTime: 0, attempt: 1, now: 0)
        #expect(machine.keepaliveTick(now: 30).isEmpty)
        machine.sent(now: 30)
        #expect(machine.keepaliveTick(now: 45).isEmpty)
        #expect(machine.keepaliveTick(now: 74) == [.sendKeepalive])
        #expect(machine.keepaliveTick(now: 90).isEmpty)
    }
}
