import Synchronization

/// Where each namespace's deployed rules and their versions are kept between restarts: files under the
/// data directory (``files(directory:log:)``, what `hearth serve` uses by default), a PostgreSQL table
/// (`hearth serve --storage`, supplied by HearthCLI), or memory (``inMemory()``, tests).
///
/// Every call may wait (a disk, or a network round trip), so the server never makes one on its event
/// loop: `load` runs where a namespace is opened (a loading thread when it opens over the network),
/// `save` and `delete` on the registry's maintenance queue.
///
///     let rules = RulesStorage.files(directory: "hearth-data", log: .standardError)
///     let number = try rules.save("shop", json, RulesDeployment(format: .json, source: json, deployedAt: now))
///     try rules.load("shop").rules   // json
public struct RulesStorage: Sendable {
    /// The namespace's stored rules and versions.
    public var load: @Sendable (_ namespace: String) throws -> StoredRules
    /// Makes `rules` (rules JSON) the namespace's rules and adds `deployment` to its versions, numbered
    /// one past the newest, keeping the newest ``versionsMax``; returns the new number.
    public var save: @Sendable (_ namespace: String, _ rules: String, _ deployment: RulesDeployment) throws -> Int
    /// Removes the namespace's rules and versions.
    public var delete: @Sendable (_ namespace: String) throws -> Void

    /// Versions kept per namespace; older ones are dropped.
    public static let versionsMax = 50

    public init(
        load: @escaping @Sendable (String) throws -> StoredRules,
        save: @escaping @Sendable (String, String, RulesDeployment) throws -> Int,
        delete: @escaping @Sendable (String) throws -> Void
    ) {
        self.load = load
        self.save = save
        self.delete = delete
    }

    /// Rules kept in this process only: every namespace starts with none deployed.
    public static func inMemory() -> RulesStorage {
        let stored = Mutex<[String: StoredRules]>([:])
        return RulesStorage(
            load: { namespace in stored.withLock { $0[namespace] ?? StoredRules() } },
            save: { namespace, rules, deployment in
                stored.withLock { all in all[namespace, default: StoredRules()].add(rules, deployment).version }
            },
            delete: { namespace in stored.withLock { $0[namespace] = nil } })
    }
}

/// A namespace's stored rules: the rules JSON that applies (nil when none were deployed) and the
/// deployed versions, oldest first.
public struct StoredRules: Equatable, Sendable {
    public var rules: String?
    public var versions: [RulesVersion]

    public init(rules: String? = nil, versions: [RulesVersion] = []) {
        self.rules = rules
        self.versions = versions
    }

    /// Makes `rules` apply and adds `deployment` as the next version, dropping the oldest beyond
    /// ``RulesStorage/versionsMax``; returns the version added.
    @discardableResult
    mutating func add(_ rules: String, _ deployment: RulesDeployment) -> RulesVersion {
        let version = RulesVersion(
            version: (versions.last?.version ?? 0) + 1, deployedAt: deployment.deployedAt, format: deployment.format,
            source: deployment.source)
        self.rules = rules
        record(version)
        return version
    }

    /// Adds a version numbered elsewhere (by the storage), dropping the oldest beyond the limit.
    mutating func record(_ version: RulesVersion) {
        versions.append(version)
        if versions.count > RulesStorage.versionsMax { versions.removeFirst(versions.count - RulesStorage.versionsMax) }
    }
}

/// What one deploy stores besides the rules JSON: what was deployed (`source`, the Bolt text when
/// it came as Bolt) and when (milliseconds since 1970).
public struct RulesDeployment: Equatable, Sendable {
    public var format: RulesVersion.Format
    public var source: String
    public var deployedAt: Int64

    public init(format: RulesVersion.Format, source: String, deployedAt: Int64) {
        self.format = format
        self.source = source
        self.deployedAt = deployedAt
    }
}
