import Foundation
import HearthStorage
import HearthSupport

/// `hearth serve --backup-every 1h --backup-keep 48 --backup-dir DIR`: every namespace backed up on a
/// thread of its own (``BackupMaker``), each backup verified before it counts, and the oldest beyond
/// `keep` removed once a newer one is verified. A backup reads a snapshot beside the writers, never
/// holding them; a failed one is logged and tried again next round, and never removes an older one.
final class ScheduledBackups: @unchecked Sendable {
    private let schedule: BackupSchedule
    private let backups: BackupDirectory
    private let store: DataStore
    private let names: @Sendable () -> [String]
    private let log: Log
    private let condition = NSCondition()
    // Under `condition`.
    private var stopped = false
    private var thread: Thread?
    private var finished = false

    /// The longest wait between looks at the namespaces, so that a new one is backed up soon.
    static let lookMillisecondsMax: Int64 = 60_000

    init(schedule: BackupSchedule, backups: BackupDirectory, store: DataStore, names: @escaping @Sendable () -> [String], log: Log) {
        self.schedule = schedule
        self.backups = backups
        self.store = store
        self.names = names
        self.log = log
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "hearth.backups"
        self.thread = thread
        thread.start()
    }

    /// Stops after the backup being made, if any, is done.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while thread != nil && !finished { condition.wait() }
        condition.unlock()
    }

    private func run() {
        while true {
            let next = round()
            condition.lock()
            let wait = max(0, min(next - Self.now(), Self.lookMillisecondsMax))
            if !stopped { _ = condition.wait(until: Date(timeIntervalSinceNow: Double(wait) / 1000)) }
            if stopped {
                finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
            condition.unlock()
        }
    }

    /// Backs up every namespace that is due; returns when the next one is.
    private func round() -> Int64 {
        var next = Self.now() + min(schedule.everyMilliseconds, Self.lookMillisecondsMax)
        for namespace in names().sorted() {
            if isStopped { break }
            let existing = backups.backups(of: namespace)
            // What a crash left half made is never restored from; it goes.
            for directory in existing.unfinished { backups.remove(directory) }
            var due = schedule.nextRound(newest: existing.verified.last?.manifest.time)
            if due <= Self.now() {
                backUp(namespace, existing: existing.verified)
                due = Self.now() + schedule.everyMilliseconds
            }
            next = min(next, due)
        }
        return next
    }

    private var isStopped: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopped
    }

    private func backUp(_ namespace: String, existing: [BackupDirectory.Backup]) {
        do {
            let engine = try store.openForReading(namespace)
            defer { engine.close() }
            let made = try BackupMaker.make(namespace: namespace, engine: engine, format: store.backupFormat, into: backups)
            let removed = schedule.removed(existing + [made]) { $0.manifest.time }
            for backup in removed { backups.remove(backup.directory) }
            let manifest = made.manifest
            log("hearth: backed up '\(namespace)' to \(made.directory) (\(BackupsCommand.size(manifest.bytes)), feed position \(manifest.position), read back and verified, \(String(format: "%.2f", manifest.seconds)) s); \(existing.count + 1 - removed.count) kept.")
        } catch {
            log("hearth: the backup of '\(namespace)' failed: \(error). Older backups are kept; the next round tries again.")
        }
    }

    private static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}

extension DataStore {
    /// How this store's backups keep the data.
    var backupFormat: BackupManifest.Format {
        switch self {
        case .sqlite: .sqlite
        case .postgres: .json
        }
    }
}
