/// When scheduled backups are made and which are kept (`hearth serve --backup-every --backup-keep`):
/// decisions only; `ScheduledBackups` in the command line acts on them.
public struct BackupSchedule: Sendable, Equatable {
    /// Milliseconds between rounds.
    public var everyMilliseconds: Int64
    /// Backups kept per namespace, the newest; older ones are removed once a new one is verified.
    public var keep: Int

    public init(everyMilliseconds: Int64, keep: Int) {
        self.everyMilliseconds = everyMilliseconds
        self.keep = keep
    }

    /// When the next round is due: at once when there is no backup yet, else `every` after the newest
    /// (so a restart neither skips a round nor makes one early).
    public func nextRound(newest: Int64?) -> Int64 {
        guard let newest else { return 0 }
        return newest + everyMilliseconds
    }

    /// Of one namespace's verified backups, those to remove: all but the newest `keep`.
    public func removed<Backup>(_ backups: [Backup], time: (Backup) -> Int64) -> [Backup] {
        let newestFirst = backups.sorted { time($0) > time($1) }
        return Array(newestFirst.dropFirst(keep))
    }
}
