import Foundation
import Synchronization

/// The project settings an admin changes at runtime, each kept as one JSON text under its name.
public enum AuthSettingName: String, Sendable, CaseIterable {
    /// ``SignInMethods``.
    case signInMethods = "sign_in_methods"
    /// ``IdentityProviderConfigs``: built-in providers, OIDC and SAML configurations, client secrets
    /// included (so the storage is owner-only).
    case identityProviders = "identity_providers"
    /// ``BlockingHooks``: URLs and their secrets (so the storage is owner-only).
    case blockingHooks = "blocking_hooks"
}

/// Where settings are kept between restarts and, for a cluster, shared by its nodes: a file each in the
/// data directory by default (``AuthSettingsDirectory``), rows of `hearth_auth_settings` in PostgreSQL
/// for a cluster. An ``AuthService`` reads them at start, re-reads them at most once a second (so a
/// change made on another node is seen within that), and saves an admin's change.
public protocol AuthSettingsStorage: Sendable {
    /// The saved text; nil when none was ever saved (the service then uses its defaults).
    func load(_ name: AuthSettingName) throws -> String?
    func save(_ name: AuthSettingName, _ text: String) throws
}

/// Settings as owner-only files `<directory>/auth-<name>.json` (`auth-sign-in-methods.json`), each
/// written through a temporary file and renamed into place.
public struct AuthSettingsDirectory: AuthSettingsStorage {
    public let directory: String

    public init(directory: String) {
        self.directory = directory.hasSuffix("/") ? directory : directory + "/"
    }

    public func path(_ name: AuthSettingName) -> String {
        directory + "auth-" + name.rawValue.replacingOccurrences(of: "_", with: "-") + ".json"
    }

    public func load(_ name: AuthSettingName) throws -> String? {
        FileManager.default.contents(atPath: path(name)).map { String(decoding: $0, as: UTF8.self) }
    }

    public func save(_ name: AuthSettingName, _ text: String) throws {
        let target = path(name), partial = target + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        guard FileManager.default.createFile(atPath: partial, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]),
            rename(partial, target) == 0
        else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: target]) }
    }
}

/// One setting as the service uses it: the value in force, re-read from the storage at most once a
/// second (by one caller while the others go on with what was last read, also when the storage cannot
/// be read: the last known value stays), and changed by ``update(_:)``, which applies the change to what
/// is stored now (another node may have changed it since it was last read) and saves it.
final class SharedSetting<Value: Sendable>: Sendable {
    private let name: AuthSettingName
    private let storage: (any AuthSettingsStorage)?
    private let decode: @Sendable (String) -> Value?
    private let encode: @Sendable (Value) -> String
    private let state: Mutex<(value: Value, readAt: ContinuousClock.Instant)>
    /// Serialises this process's changes, so two admins' changes are applied one after the other.
    private let updating = NSLock()
    static var rereadInterval: Duration { .seconds(1) }

    /// Reads the stored value now; `fallback` when nothing is stored or it does not parse.
    init(
        _ name: AuthSettingName, storage: (any AuthSettingsStorage)?, fallback: Value, decode: @escaping @Sendable (String) -> Value?,
        encode: @escaping @Sendable (Value) -> String
    ) throws {
        self.name = name
        self.storage = storage
        self.decode = decode
        self.encode = encode
        let stored = try storage?.load(name).flatMap(decode)
        state = Mutex((stored ?? fallback, .now))
    }

    var value: Value {
        let (value, due) = state.withLock { state -> (Value, Bool) in
            guard storage != nil, ContinuousClock.now - state.readAt >= Self.rereadInterval else { return (state.value, false) }
            state.readAt = .now
            return (state.value, true)
        }
        guard due, let stored = try? storage?.load(name).flatMap(decode) else { return value }
        state.withLock { $0.value = stored }
        return stored
    }

    /// Changes the value with `change` (which may refuse by throwing) and saves it.
    @discardableResult
    func update<Result>(_ change: (inout Value) throws -> Result) throws -> Result {
        updating.lock()
        defer { updating.unlock() }
        return try apply(change)
    }

    private func apply<Result>(_ change: (inout Value) throws -> Result) throws -> Result {
        var current = try storage?.load(name).flatMap(decode) ?? state.withLock { $0.value }
        let result = try change(&current)
        try storage?.save(name, encode(current))
        let saved = current
        state.withLock { $0 = (saved, .now) }
        return result
    }
}
