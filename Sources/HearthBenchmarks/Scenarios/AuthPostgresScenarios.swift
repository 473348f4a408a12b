import Dispatch
import Foundation
import HearthAuth
import HearthAuthPostgres
import HearthCrypto
import HearthPostgres
import HearthTesting
import Synchronization

/// Auth with its accounts in PostgreSQL (HearthAuthPostgres) against the same calls on SQLite: the
/// latency of each store-bound call on one thread, and token refreshes on more threads than cores (the
/// server's concurrent auth queue) through pools of 1 to 8 connections. PostgreSQL is a server of the
/// benchmark's own on loopback (TemporaryPostgres: Debian's postgresql 15, fsync on). Passwords are hashed
/// with tiny argon2id parameters so that the store, not the hash, is what is timed.
extension Scenario {
    static let authPostgres = Scenario(
        name: "auth.postgres",
        summary: "signUp/signIn/refresh/lookup latency and refresh throughput by pool size, PostgreSQL vs SQLite"
    ) { context in
        let server = try TemporaryPostgres()
        defer { server.destroy() }
        let cheap = Argon2id(iterations: 1, memoryBytes: 1 << 20)
        func configuration() -> AuthConfiguration {
            var configuration = AuthConfiguration(projectID: "bench", emulator: true, adminToken: nil)
            configuration.passwordHasher = cheap
            configuration.failedSignInsPerAccount = .init(capacity: 1e9, perSecond: 1e9)
            return configuration
        }
        func postgres(connections: Int) throws -> AuthService {
            let database = try PostgresDatabase(url: server.url, connectionsMax: connections)
            return try AuthService(
                configuration: configuration(), store: PostgresAccountStore(database: database), key: SigningKey.loadOrCreate(in: database))
        }
        let services: [(String, AuthService)] = [
            ("SQLite", try AuthWorkload.service("auth-postgres-reference", hasher: cheap)),
            ("PostgreSQL", try postgres(connections: AuthService.postgresConnectionsMax)),
        ]

        // Latency: one call at a time, each store.
        let calls = 200
        let counter = Atomic<Int>(0)
        var latencies: [(name: String, value: Double)] = []
        for (name, service) in services {
            let email = "latency-\(name)@example.com"
            let signUp = AuthWorkload.post(
                service, "/identitytoolkit.googleapis.com/v1/accounts:signUp", #"{"email":"\#(email)","password":"secret123"}"#)
            let refreshToken = AuthWorkload.field(signUp, "refreshToken"), idToken = AuthWorkload.field(signUp, "idToken")
            let steps: [(String, () -> Void)] = [
                ("signUp", {
                    let index = counter.add(1, ordering: .relaxed).newValue
                    blackHole(AuthWorkload.field(AuthWorkload.post(
                        service, "/identitytoolkit.googleapis.com/v1/accounts:signUp",
                        #"{"email":"u\#(index)-\#(name)@example.com","password":"secret123"}"#), "idToken"))
                }),
                ("signIn", {
                    blackHole(AuthWorkload.field(AuthWorkload.post(
                        service, "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword",
                        #"{"email":"\#(email)","password":"secret123"}"#), "idToken"))
                }),
                ("refresh", {
                    blackHole(AuthWorkload.field(AuthWorkload.post(
                        service, "/securetoken.googleapis.com/v1/token", "grant_type=refresh_token&refresh_token=\(refreshToken)",
                        form: true), "id_token"))
                }),
                ("lookup", {
                    let response = AuthWorkload.post(service, "/identitytoolkit.googleapis.com/v1/accounts:lookup", #"{"idToken":"\#(idToken)"}"#)
                    precondition(response.status == 200, response.bodyText)
                }),
            ]
            for (step, call) in steps {
                let measured = context.measure("\(name) \(step) ×\(calls)") { for _ in 0..<calls { call() } }
                let milliseconds = measured.median.seconds * 1000 / Double(calls)
                print("   \(name) \(step): \(rounded(milliseconds, places: 3)) ms per call")
                latencies.append(("\(name == "SQLite" ? "sqlite" : "postgres")\(step.prefix(1).uppercased() + step.dropFirst())Ms", milliseconds))
            }
        }

        // Throughput on more threads than cores, through pools of each size and on SQLite: refreshes (one
        // indexed read and an RS256 signature: CPU-bound), sign-ins (a read, a locked change and a token
        // insert: two commits) and the store alone (one commit per call: bound by WAL flushes, which
        // PostgreSQL shares between concurrent commits). The machine is shared and its speed drifts over
        // seconds, so the contenders take turns: each round runs every one once.
        let threads = 8
        struct Contender {
            let label: String
            let service: AuthService
            let accounts: [(email: String, refreshToken: String)]
        }
        func contender(_ label: String, _ service: AuthService) -> Contender {
            Contender(label: label, service: service, accounts: (0..<threads).map { _ in
                let email = "throughput-\(counter.add(1, ordering: .relaxed).newValue)@example.com"
                let signUp = AuthWorkload.post(
                    service, "/identitytoolkit.googleapis.com/v1/accounts:signUp", #"{"email":"\#(email)","password":"secret123"}"#)
                return (email, AuthWorkload.field(signUp, "refreshToken"))
            })
        }
        let pools = [1, 2, 4, 8]
        let contenders = try pools.map { contender("pool of \($0)", try postgres(connections: $0)) } + [contender("SQLite", services[0].1)]
        let workloads: [(name: String, perThread: Int, call: @Sendable (AuthService, String, String) -> Void)] = [
            ("refreshes", 250, { service, _, token in
                blackHole(AuthWorkload.field(AuthWorkload.post(
                    service, "/securetoken.googleapis.com/v1/token", "grant_type=refresh_token&refresh_token=\(token)", form: true),
                    "id_token"))
            }),
            ("signIns", 50, { service, email, _ in
                blackHole(AuthWorkload.field(AuthWorkload.post(
                    service, "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword",
                    #"{"email":"\#(email)","password":"secret123"}"#), "idToken"))
            }),
            ("tokenInserts", 100, { service, email, _ in
                try? service.store.insertRefreshToken(RefreshTokenRecord(
                    tokenHash: SecureRandom.bytes(32), uid: email, provider: "password", authTime: 0, extraClaims: nil, issuedAt: 0,
                    revoked: false))
            }),
        ]
        var rates = [[[Double]]](repeating: [[Double]](repeating: [], count: workloads.count), count: contenders.count)
        let clock = ContinuousClock()
        for round in 0...context.configuration.measuredRunCount {  // round 0 warms up
            for (c, contender) in contenders.enumerated() {
                for (w, workload) in workloads.enumerated() {
                    let start = clock.now
                    AuthWorkload.parallel(threads: threads, perThread: workload.perThread) { thread, _ in
                        workload.call(contender.service, contender.accounts[thread].email, contender.accounts[thread].refreshToken)
                    }
                    if round > 0 { rates[c][w].append(Double(threads * workload.perThread) / (clock.now - start).seconds) }
                }
            }
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        var byPool: [(name: String, value: Double)] = []
        for (c, contender) in contenders.enumerated() {
            let line = workloads.indices.map { w in
                "\(workloads[w].name) \(rounded(median(rates[c][w]), places: 0))/s (\(rounded(rates[c][w].min() ?? 0, places: 0))–\(rounded(rates[c][w].max() ?? 0, places: 0)))"
            }
            print("   \(contender.label.padding(toLength: 10)) on \(threads) threads: \(line.joined(separator: ", "))")
            let prefix = c < pools.count ? "pool\(pools[c])" : "sqlite"
            for w in workloads.indices { byPool.append(("\(prefix)\(workloads[w].name.prefix(1).uppercased() + workloads[w].name.dropFirst())PerSecond", median(rates[c][w]))) }
        }
        let chosenIndex = pools.firstIndex(of: AuthService.postgresConnectionsMax) ?? 0
        let chosen = median(rates[chosenIndex][0]), sqlite = median(rates[contenders.count - 1][0])
        return BenchmarkResult(
            scenario: "auth.postgres", metric: "refreshes on \(threads) threads, PostgreSQL pool of \(AuthService.postgresConnectionsMax)",
            value: chosen, unit: "refreshes/s", reference: "the same on SQLite (auth.sqlite)", referenceValue: sqlite,
            extras: latencies + byPool)
    }
}
