import Foundation
import HearthSupport

/// The console's sign-ins (docs/console.md, "Signing in"): the one-time code `hearth serve` prints, and
/// the sessions codes and admin tokens open. A session is a random id in an HttpOnly cookie plus a CSRF
/// token the pages send in a header on every change, so another site can neither read the id nor make
/// the browser act with it. Kept in memory: a restart signs everyone out and prints a new link.
///
/// A value: it decides, and the endpoint sets cookies. `random` makes ids (tests pass their own).
struct ConsoleSessions {
    struct Session: Equatable {
        let csrf: String
        let createdAt: Int64
        var lastUsed: Int64
    }

    /// A session unused this long ends (milliseconds).
    static let idleLimit: Int64 = 12 * 3600 * 1000
    /// And any session ends this long after it began.
    static let absoluteLimit: Int64 = 7 * 24 * 3600 * 1000
    /// At most this many sessions; signing in past it ends the least recently used.
    static let maxSessions = 64

    /// The code the next sign-in link carries; replaced once used, and good for ``codeLifetime`` from
    /// when it was made.
    private(set) var signInCode: String
    private var codeIssuedAt: Int64
    static let codeLifetime: Int64 = 24 * 3600 * 1000
    private var sessions: [String: Session] = [:]
    private let random: () -> String

    init(random: @escaping () -> String = ConsoleSessions.randomToken, now: Int64 = 0) {
        self.random = random
        signInCode = random()
        codeIssuedAt = now
    }

    /// Opens a session for the holder of `code` when it is the current one-time code and not a day old;
    /// the code is then replaced by one nobody is told (a restart prints a new link). Returns the session id.
    mutating func redeem(code: String, now: Int64) -> String? {
        guard !code.isEmpty, ConstantTime.equal(code, signInCode), now - codeIssuedAt < Self.codeLifetime else { return nil }
        signInCode = random()
        codeIssuedAt = now
        return open(now: now)
    }

    /// A fresh one-time code for the admin to hand a browser (`hearth console link`), replacing the
    /// current one, good for ``codeLifetime``.
    mutating func issueSignInCode(now: Int64) -> String {
        signInCode = random()
        codeIssuedAt = now
        return signInCode
    }

    /// A session for someone who proved they are the admin some other way (the admin token).
    mutating func open(now: Int64) -> String {
        expire(now: now)
        if sessions.count >= Self.maxSessions, let oldest = sessions.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
            sessions.removeValue(forKey: oldest.key)
        }
        let id = random()
        sessions[id] = Session(csrf: random(), createdAt: now, lastUsed: now)
        return id
    }

    /// The live session `id` names, marked used now; nil when there is none or it ended.
    mutating func session(_ id: String, now: Int64) -> Session? {
        guard var session = sessions[id] else { return nil }
        guard now - session.lastUsed < Self.idleLimit, now - session.createdAt < Self.absoluteLimit else {
            sessions.removeValue(forKey: id)
            return nil
        }
        session.lastUsed = now
        sessions[id] = session
        return session
    }

    mutating func close(_ id: String) { sessions.removeValue(forKey: id) }

    /// Whether `id` names a live session, without marking it used (the once-a-second sweep of open
    /// streams asks this).
    func isLive(_ id: String, now: Int64) -> Bool {
        guard let session = sessions[id] else { return false }
        return now - session.lastUsed < Self.idleLimit && now - session.createdAt < Self.absoluteLimit
    }

    private mutating func expire(now: Int64) {
        sessions = sessions.filter { now - $0.value.lastUsed < Self.idleLimit && now - $0.value.createdAt < Self.absoluteLimit }
    }

    /// 32 random bytes as hex.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        var text = ""
        for _ in 0..<32 {
            let byte = UInt8.random(in: 0...255, using: &generator)
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return text
    }
}

/// The console's cookie: its name, reading it from a `Cookie` header, and the `Set-Cookie` values.
enum ConsoleCookie {
    static let name = "hearth_console"

    /// The session id in a `Cookie` header (`a=1; hearth_console=…`), or nil.
    static func sessionID(in header: String?) -> String? {
        guard let header else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name else { continue }
            let value = parts[1].trimmingCharacters(in: .whitespaces)
            // Ours are 64 hex digits; anything else is not worth a lookup.
            guard value.count <= 128 else { return nil }
            return value
        }
        return nil
    }

    /// HttpOnly: scripts (and so an injected one) never see it. SameSite=Strict: other sites' pages do
    /// not send it. Path=/: the database's REST paths take it too.
    static func set(_ id: String, secure: Bool) -> String {
        "\(name)=\(id); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(ConsoleSessions.absoluteLimit / 1000)" + (secure ? "; Secure" : "")
    }

    static let clear = "\(name)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
}
