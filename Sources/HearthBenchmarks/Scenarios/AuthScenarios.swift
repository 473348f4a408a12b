import HearthProtocol
import Dispatch
import Foundation
import HearthAuth
import HearthAuthSQLite
import HearthCrypto

/// Auth workloads (issue 6): AuthService in this process with its SQLite store in a temporary directory,
/// called through `handle(_:)` with the JSON bodies the JS SDK sends, so request parsing, the store and
/// token signing are all counted; only the HTTP transport is left out.
enum AuthWorkload {
    /// One per core, or `HEARTH_BENCH_THREADS`.
    static var threads: Int {
        ProcessInfo.processInfo.environment["HEARTH_BENCH_THREADS"].flatMap(Int.init)
            ?? max(1, ProcessInfo.processInfo.activeProcessorCount)
    }

    static func service(_ name: String, hasher: Argon2id = .hearthDefault) throws -> AuthService {
        var configuration = AuthConfiguration(projectID: "bench", emulator: true, adminToken: nil)
        configuration.passwordHasher = hasher
        configuration.failedSignInsPerAccount = .init(capacity: 1e9, perSecond: 1e9)
        return try AuthService.open(dataDirectory: ServerHarness.temporaryDirectory(name), configuration: configuration)
    }

    static func post(_ service: AuthService, _ path: String, _ body: String, form: Bool = false) -> HTTPResponse {
        service.handle(HTTPRequest(
            method: .post, path: path, queryItems: [("key", "bench")],
            headers: ["content-type": form ? "application/x-www-form-urlencoded" : "application/json"],
            body: Array(body.utf8)))
    }

    /// A string field of a 200 answer, found by its key's text (cheaper than a JSON parse, which would
    /// be counted against Hearth; Hearth writes string fields without spaces and its tokens need no escapes).
    static func field(_ response: HTTPResponse, _ name: String) -> String {
        precondition(response.status == 200, "auth benchmark call failed: \(response.bodyText)")
        let body = response.body, key = Array("\"\(name)\":\"".utf8)
        guard key.count <= body.count,
            let start = (0...(body.count - key.count)).first(where: { body[$0..<($0 + key.count)].elementsEqual(key) })
        else { preconditionFailure("no \(name) in \(response.bodyText)") }
        let valueStart = start + key.count
        let valueEnd = body[valueStart...].firstIndex(of: UInt8(ascii: "\"")) ?? body.count
        return String(decoding: body[valueStart..<valueEnd], as: UTF8.self)
    }

    /// Runs `body(thread, index)` `perThread` times on each of `threads` threads at once.
    static func parallel(threads: Int, perThread: Int, _ body: @Sendable (Int, Int) -> Void) {
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<perThread { body(thread, index) }
        }
    }
}

/// Boxes shared across the worker threads of one run; each thread touches only its own slot.
final class Slots<T>: @unchecked Sendable {
    var values: [T]
    init(_ values: [T]) { self.values = values }
}

extension Scenario {
    /// argon2id cost per hash at several parameter sets (printed), then sign-ins/s at Hearth's parameters on
    /// every core; the reference is bare argon2id verification at the same parameters on the same threads
    /// (the floor of a sign-in).
    static let authSignIn = Scenario(
        name: "auth.signin",
        summary: "signInWithPassword on all cores (argon2id m=19 MiB, t=2), vs bare argon2id verification"
    ) { context in
        let candidates: [(String, Argon2id)] = [
            ("m=64 MiB t=3 (libsodium MODERATE-ish)", Argon2id(iterations: 3, memoryBytes: 64 << 20)),
            ("m=46 MiB t=1 (OWASP option 1)", Argon2id(iterations: 1, memoryBytes: 46 << 20)),
            ("m=19 MiB t=2 (OWASP option 2, chosen)", .hearthDefault),
            ("m=12 MiB t=3 (OWASP option 3)", Argon2id(iterations: 3, memoryBytes: 12 << 20)),
        ]
        for (label, hasher) in candidates {
            let hash = try hasher.hash("correct horse battery")
            let clock = ContinuousClock()
            let start = clock.now
            for _ in 0..<10 { blackHole(Argon2id.verify("correct horse battery", against: hash)) }
            let milliseconds = (clock.now - start).seconds * 100
            print("   argon2id \(label.padding(toLength: 40)) \(rounded(milliseconds, places: 1)) ms per verification (one core)")
        }

        let threads = AuthWorkload.threads, perThread = 50, total = threads * perThread
        let service = try AuthWorkload.service("auth-signin")
        let emails = (0..<threads).map { "bench\($0)@example.com" }
        for email in emails {
            _ = AuthWorkload.field(AuthWorkload.post(
                service, "/identitytoolkit.googleapis.com/v1/accounts:signUp",
                #"{"email":"\#(email)","password":"secret123","returnSecureToken":true}"#), "idToken")
        }
        let hearth = context.measure("Hearth signInWithPassword ×\(total)") {
            AuthWorkload.parallel(threads: threads, perThread: perThread) { thread, _ in
                blackHole(AuthWorkload.field(AuthWorkload.post(
                    service, "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword",
                    #"{"email":"\#(emails[thread])","password":"secret123","returnSecureToken":true,"clientType":"CLIENT_TYPE_WEB"}"#),
                    "idToken"))
            }
        }
        let stored = try Argon2id.hearthDefault.hash("secret123")
        let reference = context.measure("argon2id verify alone ×\(total)") {
            AuthWorkload.parallel(threads: threads, perThread: perThread) { _, _ in
                blackHole(Argon2id.verify("secret123", against: stored))
            }
        }
        return BenchmarkResult(
            scenario: "auth.signin", metric: "sign-ins on \(threads) threads", value: Double(total) / hearth.median.seconds,
            unit: "sign-ins/s", reference: "bare argon2id verify (libsodium, same parameters)",
            referenceValue: Double(total) / reference.median.seconds,
            extras: [("msPerSignIn", hearth.median.seconds * 1000 * Double(threads) / Double(total))])
    }

    /// Token refreshes (form-encoded, as the JS SDK sends them) on all cores: look up the hashed refresh token,
    /// sign a new RS256 ID token (the refresh token is looked up in SQLite, not rotated). Reference: bare RS256 signing.
    static let authRefresh = Scenario(
        name: "auth.refresh",
        summary: "securetoken refresh on all cores, vs bare RS256 signing (OpenSSL)"
    ) { context in
        let threads = AuthWorkload.threads, perThread = 2_000, total = threads * perThread
        let service = try AuthWorkload.service("auth-refresh", hasher: Argon2id(iterations: 1, memoryBytes: 1 << 20))
        let signUp = AuthWorkload.post(
            service, "/identitytoolkit.googleapis.com/v1/accounts:signUp",
            #"{"email":"refresh@example.com","password":"secret123","returnSecureToken":true}"#)
        let uid = AuthWorkload.field(signUp, "localId")
        let tokens = Slots((0..<threads).map { _ in "" })
        let hearth = context.measure("Hearth token refresh ×\(total)", prepare: {
            for thread in 0..<threads {
                tokens.values[thread] = AuthWorkload.field(AuthWorkload.post(
                    service, "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword",
                    #"{"email":"refresh@example.com","password":"secret123","returnSecureToken":true}"#), "refreshToken")
            }
        }) {
            AuthWorkload.parallel(threads: threads, perThread: perThread) { thread, _ in
                let response = AuthWorkload.post(
                    service, "/securetoken.googleapis.com/v1/token",
                    "grant_type=refresh_token&refresh_token=\(tokens.values[thread])", form: true)
                tokens.values[thread] = AuthWorkload.field(response, "refresh_token")
            }
        }
        precondition(!uid.isEmpty)
        let key = service.key.privateKey
        let message = Array(String(repeating: "x", count: 600).utf8)
        let reference = context.measure("RS256 sign alone ×\(total)") {
            DispatchQueue.concurrentPerform(iterations: threads) { _ in
                for _ in 0..<perThread { blackHole(try? key.signRS256(message)) }
            }
        }
        return BenchmarkResult(
            scenario: "auth.refresh", metric: "refreshes on \(threads) threads", value: Double(total) / hearth.median.seconds,
            unit: "refreshes/s", reference: "bare RS256 sign (OpenSSL, 2048-bit)",
            referenceValue: Double(total) / reference.median.seconds)
    }

    /// ID-token verification on one core, full check without the cache (split, base64url, RS256 verify, payload
    /// parse, aud/iss/sub/exp checks), with the cached path as an extra. Reference: bare RS256 verification.
    static let authVerify = Scenario(
        name: "auth.verify",
        summary: "ID-token verification on one core (uncached; cached as extra), vs a bare OpenSSL RS256 verify"
    ) { context in
        let service = try AuthWorkload.service("auth-verify", hasher: Argon2id(iterations: 1, memoryBytes: 1 << 20))
        let idToken = AuthWorkload.field(AuthWorkload.post(
            service, "/identitytoolkit.googleapis.com/v1/accounts:signUp",
            #"{"email":"verify@example.com","password":"secret123","returnSecureToken":true}"#), "idToken")
        let verifier = service.verifier
        let count = 50_000
        let now = Int64(Date().timeIntervalSince1970)
        let hearth = try context.measure("TokenVerifier uncached ×\(count)") {
            for _ in 0..<count { blackHole(try verifier.verifyUncached(idToken, now: now)) }
        }
        let cached = try context.measure("TokenVerifier cached ×\(count)") {
            for _ in 0..<count { blackHole(try verifier.verify(idToken)) }
        }
        let parts = idToken.split(separator: ".")
        let message = Array("\(parts[0]).\(parts[1])".utf8)
        let signature = Base64URL.decode(parts[2])!
        let publicKey = service.key.publicKey
        let bare = context.measure("RS256 verify, pooled ctx ×\(count)") {
            for _ in 0..<count { blackHole(publicKey.verifyRS256(message, signature: signature)) }
        }
        let reference = context.measure("RS256 EVP_DigestVerify ×\(count)") {
            for _ in 0..<count { blackHole(publicKey.verifyRS256OneShot(message, signature: signature)) }
        }
        return BenchmarkResult(
            scenario: "auth.verify", metric: "ID-token verifications on one core", value: Double(count) / hearth.median.seconds,
            unit: "verifications/s", reference: "bare RS256 verify, OpenSSL EVP_DigestVerify per call (2048-bit)",
            referenceValue: Double(count) / reference.median.seconds,
            extras: [
                ("cachedPerSecond", Double(count) / cached.median.seconds),
                ("bareSignatureCheckPerSecond", Double(count) / bare.median.seconds),
            ])
    }
}
