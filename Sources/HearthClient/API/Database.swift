public import Foundation
import HearthCore
import HearthSupport

/// One Realtime Database: where references come from, and the connection settings, as `Database` in
/// FirebaseDatabase. Settings (`useEmulator`, `isPersistenceEnabled`, `persistenceCacheSizeBytes`) must
/// be made before the first reference is taken, as Firebase requires.
///
///     let database = Database.database(url: "http://localhost:9000?ns=demo")
///     database.isPersistenceEnabled = true
///     let jokes = database.reference(withPath: "jokes")
open class Database: NSObject, @unchecked Sendable {  // mutable state is behind `state`
    public private(set) weak var app: FirebaseApp?
    let databaseURL: String
    private let key: String

    private struct State {
        var info: RepoInfo
        var repo: Repo?
        var persistence = false
        var cacheSize: UInt = ClientLimits.cacheSizeBytesDefault
        var callbackQueue = DispatchQueue.main
        var transport: TransportFactory = Transports.platform
    }
    private let state: Locked<State>

    private static let instances = Locked<[String: Database]>([:])

    @available(*, unavailable, message: "use Database.database() or Database.database(url:)")
    public override init() { fatalError("use Database.database()") }

    private init(app: FirebaseApp?, url: String, info: RepoInfo, key: String) {
        self.app = app
        databaseURL = url
        self.key = key
        state = Locked(State(info: info))
        super.init()
    }

    // MARK: Instances

    /// The default app's database (its options' `databaseURL`).
    public class func database() -> Database {
        guard let app = FirebaseApp.app() else {
            fatalError("Database.database(): call FirebaseApp.configure() first (or set HEARTH_DATABASE_URL and call it).")
        }
        return database(app: app)
    }

    public class func database(url: String) -> Database {
        guard let app = FirebaseApp.app() else {
            return instance(app: nil, url: url)
        }
        return database(app: app, url: url)
    }

    /// The app's database: its options' `databaseURL`, else, as FirebaseDatabase does, the project's
    /// default one, `https://<projectID>-default-rtdb.firebaseio.com`.
    public class func database(app: FirebaseApp) -> Database {
        if let url = app.configuredOptions.databaseURL, !url.isEmpty { return database(app: app, url: url) }
        guard let project = app.configuredOptions.projectID, !project.isEmpty else {
            fatalError("Database.database(app:): the app '\(app.name)' has neither a databaseURL nor a projectID in its options.")
        }
        return database(app: app, url: "https://\(project)-default-rtdb.firebaseio.com")
    }

    public class func database(app: FirebaseApp, url: String) -> Database {
        instance(app: app, url: url)
    }

    /// A database whose connection authenticates with a server's admin token (the server's
    /// `admin-token` file, or `owner` in emulator mode), bypassing rules: what HearthFunctions writes
    /// back with. For code on the server's side only, so not public; nil when `url` is not a database URL.
    package static func administered(url: String, adminToken: String) -> Database? {
        guard RepoInfo(databaseURL: url) != nil else { return nil }
        let database = instance(app: nil, url: url, key: "admin:" + adminToken.count.description + "|" + url)
        database.repo.setAuthTokenProvider { _, done in done(adminToken) }
        return database
    }

    private static func instance(app: FirebaseApp?, url: String, key explicitKey: String? = nil) -> Database {
        guard let info = RepoInfo(databaseURL: url) else {
            fatalError("'\(url)' is not a database URL: use https://<namespace>.firebaseio.com or http://host:port?ns=<namespace>.")
        }
        let key = explicitKey ?? (app?.name ?? "") + "|" + url
        return instances.withLock { instances in
            if let existing = instances[key] { return existing }
            let database = Database(app: app, url: url, info: info, key: key)
            instances[key] = database
            return database
        }
    }

    static func appDeleted(_ app: FirebaseApp) {
        let removed = instances.withLock { instances in
            let keys = instances.keys.filter { $0.hasPrefix(app.name + "|") }
            return keys.compactMap { instances.removeValue(forKey: $0) }
        }
        for database in removed { database.goOffline() }
    }

    // MARK: The repo

    /// The database's client, made on first use with the settings as they are then.
    var repo: Repo {
        state.withLock { state in
            if let repo = state.repo { return repo }
            let callbackQueue: @Sendable () -> DispatchQueue = { [weak self] in self?.callbackQueue ?? .main }
            let persistence: ClientPersistence? =
                state.persistence ? SQLitePersistence.open(info: state.info, cacheSizeBytes: state.cacheSize) : nil
            let repo = Repo(info: state.info, callbackQueue: callbackQueue, persistence: persistence, transport: state.transport)
            state.repo = repo
            if let app { follow(Auth.auth(app: app), with: repo) }
            return repo
        }
    }

    var info: RepoInfo { state.withLock { $0.info } }

    /// The connection authenticates as the app's signed-in user and follows every change of its token.
    private func follow(_ auth: Auth, with repo: Repo) {
        repo.setAuthTokenProvider { [weak auth] force, done in
            guard let auth else { return done(nil) }
            // At once when the token is fresh or no one is signed in, so the connection's auth goes
            // out before the app's next write; after the refresh otherwise.
            if let known = auth.knownToken(forceRefresh: force) { return done(known) }
            Task { done(await auth.tokenForDatabase(forceRefresh: force)) }
        }
        auth.observeTokens(repo) { [weak repo] in repo?.authChanged() }
    }

    private func setting(_ name: String, _ change: (inout State) -> Void) {
        state.withLock { state in
            guard state.repo == nil else {
                ClientLog.warning("\(name) is ignored: it must be set before the database is first used.")
                return
            }
            change(&state)
        }
    }

    /// Replaces the platform's WebSocket client (tests).
    func useTransport(_ transport: @escaping TransportFactory) {
        setting("the transport") { $0.transport = transport }
    }

    // MARK: References

    public func reference() -> DatabaseReference { DatabaseReference(database: self, path: .root) }

    public func reference(withPath path: String) -> DatabaseReference {
        DatabaseReference(database: self, pathString: path)
    }

    /// A reference from a full URL of this database (`http://localhost:9000/users/ada?ns=demo`).
    public func reference(fromURL databaseUrl: String) -> DatabaseReference {
        guard let components = URLComponents(string: databaseUrl), let other = RepoInfo(databaseURL: databaseUrl),
            other.namespace == info.namespace
        else {
            return DatabaseReference(database: self, path: .root, invalid: "'\(databaseUrl)' is not a URL of this database (\(databaseURL))")
        }
        return DatabaseReference(database: self, pathString: components.percentEncodedPath.removingPercentEncoding ?? components.path)
    }

    // MARK: Settings

    /// Points this database at an emulator or a local Hearth (`localhost`, 9000), without TLS.
    public func useEmulator(withHost host: String, port: Int) {
        setting("useEmulator(withHost:port:)") { $0.info = $0.info.usingEmulator(host: host, port: port) }
    }

    /// Keeps writes not yet acknowledged and the data of listened queries in a SQLite file, so they
    /// survive the process (Linux: `$XDG_DATA_HOME/hearth` or `~/.local/share/hearth`; Apple:
    /// Application Support).
    public var isPersistenceEnabled: Bool {
        get { state.withLock { $0.persistence } }
        set { setting("isPersistenceEnabled") { $0.persistence = newValue } }
    }

    /// The disk cache's size (default 10 MB; 1–100 MB): the least recently used queries not kept
    /// synced are dropped beyond it.
    public var persistenceCacheSizeBytes: UInt {
        get { state.withLock { $0.cacheSize } }
        set {
            let range = ClientLimits.cacheSizeBytesRange
            setting("persistenceCacheSizeBytes") { $0.cacheSize = min(max(newValue, range.lowerBound), range.upperBound) }
        }
    }

    /// Where events and completions run (default: the main queue, as in Firebase). A command-line
    /// program that never runs the main queue sets its own, or uses the async API.
    public var callbackQueue: DispatchQueue {
        get { state.withLock { $0.callbackQueue } }
        set { state.withLock { $0.callbackQueue = newValue } }
    }

    public class func setLoggingEnabled(_ enabled: Bool) { ClientLog.setEnabled(enabled) }

    public class func sdkVersion() -> String { HearthClientVersion.string }

    // MARK: Connection

    public func goOffline() { repo.goOffline() }
    public func goOnline() { repo.goOnline() }

    /// Drops every write not yet acknowledged (their completions get "write cancelled").
    public func purgeOutstandingWrites() { repo.purgeOutstandingWrites() }

    /// Every database of the process offline or online (`DatabaseReference.goOffline()`).
    static func allDatabases() -> [Database] { instances.withLock { Array($0.values) } }
}
