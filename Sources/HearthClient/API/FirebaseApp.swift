public import Foundation
import HearthSupport

/// The options that name a Firebase project's services, as `FirebaseOptions` in FirebaseCore. For
/// Hearth, `databaseURL` is what matters: `http://localhost:9000?ns=demo`, or `https://db.example.com?ns=app`.
///
///     let options = FirebaseOptions(googleAppID: "1:1:ios:1", gcmSenderID: "1")
///     options.databaseURL = "http://localhost:9000?ns=demo"
///     FirebaseApp.configure(options: options)
open class FirebaseOptions: NSObject, NSCopying, @unchecked Sendable {  // mutable only while configuring, as Firebase's
    open var apiKey: String?
    open var bundleID: String
    open var clientID: String?
    open var gcmSenderID: String
    open var projectID: String?
    open var googleAppID: String
    open var databaseURL: String?
    open var storageBucket: String?
    open var appGroupID: String?

    public init(googleAppID: String, gcmSenderID GCMSenderID: String) {
        self.googleAppID = googleAppID
        gcmSenderID = GCMSenderID
        bundleID = Bundle.main.bundleIdentifier ?? ""
        super.init()
    }

    /// Reads a `GoogleService-Info.plist`.
    public init?(contentsOfFile plistPath: String) {
        guard let data = FileManager.default.contents(atPath: plistPath),
            let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
            let appID = plist["GOOGLE_APP_ID"] as? String
        else { return nil }
        googleAppID = appID
        gcmSenderID = plist["GCM_SENDER_ID"] as? String ?? ""
        bundleID = plist["BUNDLE_ID"] as? String ?? Bundle.main.bundleIdentifier ?? ""
        apiKey = plist["API_KEY"] as? String
        clientID = plist["CLIENT_ID"] as? String
        projectID = plist["PROJECT_ID"] as? String
        databaseURL = plist["DATABASE_URL"] as? String
        storageBucket = plist["STORAGE_BUCKET"] as? String
        super.init()
    }

    /// The options `FirebaseApp.configure()` uses: the environment (`HEARTH_DATABASE_URL`,
    /// `HEARTH_API_KEY`, `HEARTH_PROJECT_ID`, for servers and command-line tools), else the main
    /// bundle's `GoogleService-Info.plist`.
    public class func defaultOptions() -> FirebaseOptions? {
        let environment = ProcessInfo.processInfo.environment
        if let url = environment["HEARTH_DATABASE_URL"] {
            let options = FirebaseOptions(googleAppID: "hearth", gcmSenderID: "")
            options.databaseURL = url
            options.apiKey = environment["HEARTH_API_KEY"]
            options.projectID = environment["HEARTH_PROJECT_ID"]
            return options
        }
        guard let path = Bundle.main.path(forResource: "GoogleService-Info", ofType: "plist") else { return nil }
        return FirebaseOptions(contentsOfFile: path)
    }

    public func copy(with zone: NSZone? = nil) -> Any {
        let copy = FirebaseOptions(googleAppID: googleAppID, gcmSenderID: gcmSenderID)
        copy.apiKey = apiKey
        copy.bundleID = bundleID
        copy.clientID = clientID
        copy.projectID = projectID
        copy.databaseURL = databaseURL
        copy.storageBucket = storageBucket
        copy.appGroupID = appGroupID
        return copy
    }
}

/// A configured app: a name and its options, as `FirebaseApp` in FirebaseCore.
///
///     FirebaseApp.configure()              // reads HEARTH_DATABASE_URL, or GoogleService-Info.plist
///     let ref = Database.database().reference()
open class FirebaseApp: NSObject, @unchecked Sendable {  // immutable but for isDataCollectionDefaultEnabled
    public let name: String
    private let storedOptions: FirebaseOptions
    open var options: FirebaseOptions { storedOptions.copy() as! FirebaseOptions }
    open var isDataCollectionDefaultEnabled = true

    static let defaultName = "__FIRAPP_DEFAULT"
    private static let apps = Locked<[String: FirebaseApp]>([:])

    private init(name: String, options: FirebaseOptions) {
        self.name = name
        storedOptions = options.copy() as! FirebaseOptions
        super.init()
    }

    var configuredOptions: FirebaseOptions { storedOptions }

    /// Configures the default app from ``FirebaseOptions/defaultOptions()``; stops the program with an
    /// explanation when there are none, as Firebase does.
    public class func configure() {
        guard let options = FirebaseOptions.defaultOptions() else {
            fatalError("FirebaseApp.configure(): no options. Set HEARTH_DATABASE_URL (e.g. http://localhost:9000?ns=demo) or add GoogleService-Info.plist, or call configure(options:).")
        }
        configure(options: options)
    }

    public class func configure(options: FirebaseOptions) {
        configure(name: defaultName, options: options)
    }

    public class func configure(name: String, options: FirebaseOptions) {
        apps.withLock { apps in
            if apps[name] != nil {
                fatalError("FirebaseApp '\(name)' is already configured: configure each app once.")
            }
            apps[name] = FirebaseApp(name: name, options: options)
        }
    }

    public class func app() -> FirebaseApp? { app(name: defaultName) }

    public class func app(name: String) -> FirebaseApp? { apps.withLock { $0[name] } }

    public class var allApps: [String: FirebaseApp]? {
        let all = apps.withLock { $0 }
        return all.isEmpty ? nil : all
    }

    /// Removes the app (its databases go offline).
    public func delete(_ completion: @escaping (Bool) -> Void) {
        let removed = Self.apps.withLock { $0.removeValue(forKey: name) != nil }
        Database.appDeleted(self)
        Auth.appDeleted(self)
        completion(removed)
    }

    @discardableResult
    public func delete() async -> Bool {
        await withCheckedContinuation { continuation in delete { continuation.resume(returning: $0) } }
    }
}

/// The SDK's version, as `FirebaseVersion()` in FirebaseCore.
public func FirebaseVersion() -> String { HearthClientVersion.string }

/// Log levels, as `FirebaseLoggerLevel` in FirebaseCore (the SDK logs warnings, and its protocol trace
/// at `.debug`).
public enum FirebaseLoggerLevel: Int, Sendable {
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    public static var min: FirebaseLoggerLevel { .error }
    public static var max: FirebaseLoggerLevel { .debug }
}

/// Process-wide settings, as `FirebaseConfiguration` in FirebaseCore.
open class FirebaseConfiguration: NSObject, @unchecked Sendable {  // the level is behind a lock
    public static let shared = FirebaseConfiguration()
    private let level = Locked(FirebaseLoggerLevel.warning)

    open func setLoggerLevel(_ loggerLevel: FirebaseLoggerLevel) {
        level.withLock { $0 = loggerLevel }
        ClientLog.setEnabled(loggerLevel == .debug)
    }

    open func loggerLevel() -> FirebaseLoggerLevel { level.withLock { $0 } }
}
