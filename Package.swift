// swift-tools-version:6.0
// Hearth: a self-hosted Firebase Realtime Database and Auth server.
// No package dependencies: only the toolchain and Debian's C libraries (docs/ARCHITECTURE.md, "Modules").
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// The tree engine's release build skips dynamic exclusivity checks: its B-tree nodes are classes
/// mutated through `inout` while uniquely held, and the runtime check cost ~10% of a write
/// (measured with callgrind, docs/BENCHMARKS.md). Debug builds and tests keep the checks.
let engine: [SwiftSetting] = strict + [
    .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release)),
]

let package = Package(
    name: "Hearth",
    // HearthClient's platforms, Firebase 12's (its FirebaseDatabase and FirebaseAuth): nothing the client
    // links may use an API newer than these (scripts/check-apple-availability, run by make test). The
    // server's modules are built and supported on Linux (they use Synchronization's Mutex, macOS 15).
    platforms: [.iOS(.v15), .macOS(.v10_15), .tvOS(.v15), .watchOS(.v7), .visionOS(.v1)],
    products: [
        .executable(name: "hearth", targets: ["hearth"]),
        .executable(name: "hearth-bench", targets: ["HearthBenchmarks"]),
        /// The seed tutorials' apps, in the terminal (Examples/, docs/examples.md).
        .executable(name: "jokes", targets: ["jokes"]),
        .executable(name: "social", targets: ["social"]),
        .executable(name: "board", targets: ["board"]),
        /// The seed apps' functions: vote totals, the top-10 board, follower counts (Examples/SeedFunctions).
        .executable(name: "seed-functions", targets: ["seed-functions"]),
        .executable(name: "hearth-crash-writer", targets: ["HearthCrashWriter"]),
        /// An LD_PRELOAD shim that fails fsync and writes on cue: the storage fault tests (docs/reliability.md).
        .library(name: "HearthFaultInjection", type: .dynamic, targets: ["HearthFaultInjection"]),
        .library(name: "HearthCore", targets: ["HearthCore"]),
        .library(name: "HearthStorage", targets: ["HearthStorage"]),
        .library(name: "HearthSQLite", targets: ["HearthSQLite"]),
        .library(name: "HearthPostgres", targets: ["HearthPostgres"]),
        .library(name: "HearthRules", targets: ["HearthRules"]),
        /// The Swift SDK: Firebase's Database and Auth APIs for Hearth, on Linux and Apple platforms.
        .library(name: "HearthClient", targets: ["HearthClient"]),
        /// Server-side logic in Swift on a Hearth server's change feed: firebase-functions v2's shape (docs/functions.md).
        .library(name: "HearthFunctions", targets: ["HearthFunctions"]),
        /// Every parser of client bytes as a function of those bytes: the fuzzers in Fuzz/ build on it.
        .library(name: "HearthFuzzing", targets: ["HearthFuzzing"]),
    ],
    targets: [
        .systemLibrary(name: "CMalloc", path: "Sources/CMalloc"),
        /// Linux epoll for hearth-bench's load-generator workers (Glibc's Swift module lacks it).
        .systemLibrary(name: "CEpoll", path: "Sources/CEpoll"),
        .target(name: "HearthSupport", swiftSettings: strict),
        .target(name: "HearthCore", swiftSettings: engine),
        /// Debian's libsqlite3 (3.40 on bookworm); imported only by HearthSQLite.
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "HearthStorage", dependencies: ["HearthCore", "HearthSupport"], swiftSettings: strict),
        /// Firebase Realtime Database security rules: loading, static checking, compiled evaluation.
        .target(name: "HearthRules", dependencies: ["HearthCore"], swiftSettings: strict),
        /// The storage engine conformance suite, shared by every engine's tests.
        /// Helpers shared by tests and benchmarks that start servers of their own (free ports on loopback).
        .target(name: "HearthTesting", dependencies: ["HearthProtocol"], swiftSettings: strict),
        .target(name: "HearthStorageTesting", dependencies: ["HearthStorage", "HearthCore", "HearthSupport"], swiftSettings: strict),
        /// SQLite for Swift (connections, statements, an online backup, a thread-safe database for small
        /// stores, owner-only files): what the server's engine, the account store and the client's disk cache
        /// share. The only importer of CSQLite.
        .target(name: "HearthSQL", dependencies: ["CSQLite", "HearthSupport"], swiftSettings: strict),
        .target(name: "HearthSQLite", dependencies: ["HearthStorage", "HearthCore", "HearthSupport", "HearthSQL"], swiftSettings: strict),
        /// Debian's libpq (PostgreSQL 15's client; headers in /usr/include/postgresql); imported only by HearthPostgres.
        .systemLibrary(name: "CLibPQ", path: "Sources/CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        /// The PostgreSQL engine: every namespace's records and change log in one database, group commit on its own thread.
        .target(name: "HearthPostgres", dependencies: ["HearthStorage", "HearthCore", "HearthSupport", "CLibPQ"], swiftSettings: strict),
        /// Debian's libsodium (argon2id, CSPRNG, SHA-256); imported only by HearthCrypto.
        .systemLibrary(name: "CSodium", path: "Sources/CSodium", providers: [.apt(["libsodium-dev"])]),
        /// Debian's OpenSSL 3 libcrypto (RSA/RS256, scrypt, AES-CTR); imported only by HearthCrypto.
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", providers: [.apt(["libssl-dev"])]),
        /// Small Swift types over libsodium and libcrypto: password hashes, RS256 keys, Firebase scrypt.
        .target(name: "HearthCrypto", dependencies: ["CSodium", "COpenSSL", "HearthCore", "HearthSupport"], swiftSettings: strict),
        /// Debian's libcurl (SMTP, HTTPS); imported only by HearthOutbound.
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        /// Email delivery over SMTP (libcurl) for auth's verification and reset links.
        /// What the server sends out: email over SMTP and bounded HTTPS requests (provider keys and user APIs).
        .target(name: "HearthOutbound", dependencies: ["CCurl"], swiftSettings: strict),
        /// Firebase Auth's accounts, tokens and REST API (no C; SQLite through HearthSQLite).
        .target(name: "HearthAuth", dependencies: ["HearthCrypto", "HearthCore", "HearthProtocol", "HearthSupport", "HearthOutbound", "HearthTriggers"], swiftSettings: strict),
        /// The accounts of HearthAuth in SQLite (`auth.sqlite`), and the service opened over a data directory.
        .target(name: "HearthAuthSQLite", dependencies: ["HearthAuth", "HearthSQL", "HearthSQLite", "HearthCrypto"], swiftSettings: strict),
        /// The accounts, signing key and sign-in methods of HearthAuth in PostgreSQL, shared by a cluster's
        /// nodes, and the service opened over a PostgreSQL URL.
        .target(
            name: "HearthAuthPostgres", dependencies: ["HearthAuth", "HearthPostgres", "HearthCrypto", "HearthStorage", "HearthSupport"],
            swiftSettings: strict),
        /// Debian's libwebsockets 4.1 (with its libuv event library plugin) and libuv; imported only by HearthTransport.
        .systemLibrary(
            name: "CLibWebSockets", path: "Sources/CLibWebSockets", pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev", "libwebsockets-evlib-uv", "libuv1-dev"])]),
        /// Firebase's realtime wire protocol v5 as both sides speak it: keys and actions, frames, fields.
        .target(name: "HearthWire", dependencies: ["HearthCore"], swiftSettings: strict),
        /// The server's side of the protocol and its contracts: the per-connection state machine, the
        /// encoder of server messages, the transport-facing protocols, limits, what the server asks of auth.
        .target(name: "HearthProtocol", dependencies: ["HearthCore", "HearthWire"], swiftSettings: strict),
        /// Firebase's REST API, SSE streams, realtime sessions, namespaces and access rules; no C, no sockets.
        .target(
            name: "HearthServer",
            dependencies: ["HearthCore", "HearthStorage", "HearthWire", "HearthProtocol", "HearthRules", "HearthBolt", "HearthSupport", "HearthTriggers"],
            // The console's pages (docs/console.md), served from the bundle beside the binary.
            resources: [.copy("Console/Assets")],
            swiftSettings: strict),
        /// Triggers on the change feed, pure: location patterns, feed entries read back, the events they
        /// make, the hooks document, a delivery's body and signature, the retry schedule.
        .target(name: "HearthTriggers", dependencies: ["HearthCore"], swiftSettings: strict),
        /// Webhook delivery (docs/functions.md): one worker per hook following the feed from a stored
        /// cursor, signed POSTs through libcurl, retries, dead letters and the delivery log in SQLite.
        /// Webhooks and functions processes in a cluster: HearthHooks' stores in the shared PostgreSQL, and
        /// which node delivers each hook (a lease).
        .target(
            name: "HearthHooksPostgres", dependencies: ["HearthHooks", "HearthPostgres", "HearthTriggers", "HearthStorage", "HearthCore", "HearthProtocol"],
            swiftSettings: strict),
        .target(
            name: "HearthHooks",
            dependencies: ["HearthTriggers", "HearthServer", "HearthStorage", "HearthCore", "HearthSupport", "HearthOutbound", "HearthCrypto", "HearthSQL", "HearthProtocol"],
            swiftSettings: strict),
        /// The Bolt compiler: Bolt source to Firebase rules JSON; pure Swift, no Foundation.
        .target(name: "HearthBolt", swiftSettings: strict),
        /// The HTTP server on libwebsockets + libuv: the event-loop thread that owns sockets and engine.
        .target(name: "HearthTransport", dependencies: ["HearthProtocol", "HearthSupport", "CLibWebSockets"], swiftSettings: strict),
        /// A WebSocket client on libwebsockets with a loop thread of its own: the Swift SDK's socket on
        /// Linux (URLSession's WebSocket task does not connect there). Apart from HearthTransport so that
        /// an app never links the server; the two share nothing but the C library (docs/ARCHITECTURE.md).
        .target(name: "HearthWebSocketClient", dependencies: ["HearthSupport", "CLibWebSockets"], swiftSettings: strict),
        .target(
            name: "HearthCLI",
            dependencies: [
                "HearthCore", "HearthSupport", "HearthStorage", "HearthSQL", "HearthSQLite", "HearthPostgres", "HearthServer", "HearthTransport",
                "HearthBolt", "HearthRules", "HearthAuth", "HearthAuthSQLite", "HearthAuthPostgres", "HearthCrypto", "HearthOutbound",
                "HearthProtocol", "HearthHooks", "HearthHooksPostgres", "HearthTriggers", "CMalloc",
            ],
            swiftSettings: strict),
        /// Writes continuously until killed: the child process of the crash test in HearthSQLiteTests.
        .executableTarget(
            name: "HearthCrashWriter", dependencies: ["HearthStorage", "HearthSQLite", "HearthCore"],
            swiftSettings: strict),
        .executableTarget(name: "hearth", dependencies: ["HearthCLI"], swiftSettings: strict),
        .target(name: "HearthFaultInjection", path: "Tests/Programs/FaultInjection", linkerSettings: [.linkedLibrary("dl")]),
        /// An app on HearthClient that HearthClientTests run as a process of its own, to kill and restart it.
        .executableTarget(name: "hearth-client-probe", dependencies: ["HearthClient"], path: "Sources/HearthClientProbe", swiftSettings: strict),
        /// The calls of Firebase's quickstart-ios database samples, against HearthClient (issue 30's yardstick).
        .executableTarget(
            name: "quickstart-yardstick", dependencies: ["HearthClient", "HearthSupport"], path: "Tests/Programs/QuickstartYardstick",
            swiftSettings: strict),
        /// A functions process whose functions log what they are handed: Tests/compat/test_functions.py runs it.
        .executableTarget(
            name: "hearth-functions-probe", dependencies: ["HearthFunctions", "HearthClient"], path: "Tests/Programs/FunctionsProbe",
            swiftSettings: strict),
        /// The Swift SDK (docs/swift-sdk.md): the sync engine on HearthCore, the realtime protocol, a disk
        /// cache on SQLite; libwebsockets' client (HearthTransport) on Linux, URLSession elsewhere.
        .target(
            name: "HearthClient",
            dependencies: [
                "HearthCore", "HearthSupport", "HearthWire", "HearthSQL",
                .target(name: "HearthWebSocketClient", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: strict),
        /// Functions in Swift (docs/functions.md): a process of the app developer's that follows the change
        /// feed over HTTP, runs handlers with HearthClient's snapshots and writes back with admin access.
        .target(name: "HearthFunctions", dependencies: ["HearthClient", "HearthTriggers", "HearthCore", "HearthSupport"], swiftSettings: strict),
        /// The fuzz targets (docs/fuzzing.md): run by libFuzzer from Fuzz/, and over the saved corpus by HearthFuzzingTests.
        .target(
            name: "HearthFuzzing",
            dependencies: [
                "HearthCore", "HearthProtocol", "HearthServer", "HearthStorage", "HearthAuth", "HearthAuthSQLite", "HearthCrypto", "HearthOutbound",
                "HearthRules", "HearthBolt", "HearthTesting", "HearthTriggers",
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "HearthBenchmarks",
            dependencies: [
                "HearthCore", "HearthSupport", "HearthStorage", "HearthSQLite", "HearthServer", "HearthTransport", "HearthCLI",
                "HearthRules", "HearthAuth", "HearthAuthSQLite", "HearthAuthPostgres", "HearthCrypto", "HearthProtocol", "CEpoll", "HearthClient",
                "HearthTesting", "HearthPostgres", "HearthWire", "HearthWebSocketClient", "HearthOutbound", "HearthFunctions",
            ],
            swiftSettings: strict),
        // The seed apps: a small full-screen terminal toolkit, the apps' state and commands (tested), and
        // the three executables.
        .target(name: "SeedTerminal", path: "Examples/Terminal", swiftSettings: strict),
        .target(name: "SeedApps", dependencies: ["HearthClient", "HearthBolt", "SeedTerminal"], path: "Examples/SeedApps", swiftSettings: strict),
        .executableTarget(name: "jokes", dependencies: ["SeedApps", "SeedTerminal"], path: "Examples/jokes", swiftSettings: strict),
        .executableTarget(name: "social", dependencies: ["SeedApps", "SeedTerminal"], path: "Examples/social", swiftSettings: strict),
        .executableTarget(name: "board", dependencies: ["SeedApps", "SeedTerminal"], path: "Examples/board", swiftSettings: strict),
        .target(name: "SeedFunctions", dependencies: ["HearthClient", "HearthFunctions"], path: "Examples/SeedFunctions", swiftSettings: strict),
        .executableTarget(name: "seed-functions", dependencies: ["SeedFunctions", "HearthFunctions"], path: "Examples/functions", swiftSettings: strict),
        .testTarget(name: "SeedAppsTests", dependencies: ["SeedApps", "SeedTerminal"], swiftSettings: strict),
        .testTarget(name: "HearthCoreTests", dependencies: ["HearthCore", "HearthSupport", "HearthTesting"], swiftSettings: strict),
        .testTarget(name: "HearthRulesTests", dependencies: ["HearthRules", "HearthCore", "HearthSupport", "HearthTesting"], swiftSettings: strict),
        .testTarget(
            name: "HearthStorageTests", dependencies: ["HearthStorage", "HearthStorageTesting", "HearthCore"],
            swiftSettings: strict),
        .testTarget(
            name: "HearthSQLiteTests",
            dependencies: ["HearthSQL", "HearthSQLite", "HearthStorage", "HearthStorageTesting", "HearthCore", "HearthSupport", "HearthTesting"],
            swiftSettings: strict),
        .testTarget(
            name: "HearthPostgresTests",
            dependencies: ["HearthPostgres", "HearthStorage", "HearthStorageTesting", "HearthCore", "HearthSupport", "HearthTesting"],
            swiftSettings: strict),
        .testTarget(
            name: "HearthServerTests", dependencies: ["HearthServer", "HearthStorage", "HearthCore", "HearthAuth", "HearthAuthSQLite", "HearthProtocol", "HearthWire", "HearthTesting"],
            swiftSettings: strict),
        .testTarget(
            name: "HearthProtocolTests", dependencies: ["HearthProtocol", "HearthWire", "HearthServer", "HearthStorage", "HearthCore", "HearthTesting"],
            swiftSettings: strict),
        .testTarget(
            name: "HearthTransportTests", dependencies: ["HearthTransport", "HearthWebSocketClient", "HearthServer", "HearthStorage", "HearthTesting"],
            swiftSettings: strict),
        .testTarget(name: "HearthBoltTests", dependencies: ["HearthBolt"], swiftSettings: strict),
        .testTarget(name: "HearthTriggersTests", dependencies: ["HearthTriggers", "HearthCore", "HearthStorage", "HearthOutbound"], swiftSettings: strict),
        .testTarget(name: "HearthCryptoTests", dependencies: ["HearthCrypto"], swiftSettings: strict),
        .testTarget(name: "HearthFunctionsTests", dependencies: ["HearthFunctions", "HearthTriggers", "HearthCore"], swiftSettings: strict),
        /// HearthAuth's tests, and its two stores' (SQLite and PostgreSQL) through one set of store tests.
        .testTarget(
            name: "HearthAuthTests",
            dependencies: [
                "HearthAuth", "HearthAuthSQLite", "HearthOutbound", "HearthAuthPostgres", "HearthCrypto", "HearthProtocol", "HearthSQL", "HearthSQLite", "HearthPostgres",
                "HearthStorage", "HearthTesting",
            ],
            swiftSettings: strict),
        .testTarget(name: "HearthCLITests", dependencies: ["HearthCLI", "HearthSupport"], swiftSettings: strict),
        .testTarget(name: "HearthBenchmarksTests", dependencies: ["HearthBenchmarks"], swiftSettings: strict),
        .testTarget(name: "HearthFuzzingTests", dependencies: ["HearthFuzzing"], swiftSettings: strict),
        .testTarget(
            name: "HearthClientTests", dependencies: ["HearthClient", "HearthCore", "HearthSQL", "HearthSupport", "HearthWire", "HearthTesting", "hearth-client-probe", "quickstart-yardstick"],
            swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
