import HearthCore
import HearthStorage
import HearthTriggers

extension RestoreCommand {
    /// What a restore rebuilds, from a source (``RestoreSource``) and the backups: the data now with the
    /// later writes undone while the change feed reaches back to the moment; otherwise (or with
    /// `--from-backups`) the newest backup before the moment with the writes after it done again; or one
    /// backup as it is (`--backup NAME`).
    struct Plan {
        let namespace: String
        let path: Path
        let moment: FeedRestore.Moment
        let fromBackups: Bool
        /// A backup's directory name: that backup's own instant, nothing from the feed.
        let backup: String?
        let backups: BackupDirectory

        struct Result {
            var value: Node
            /// "at 2026-12-05T10:02:00.123Z: 3 later writes undone".
            var describe: String
        }

        func run(_ source: any RestoreSource) throws -> Result {
            if let backup {
                let chosen = try named(backup)
                return Result(value: try BackupMaker.load(chosen).child(at: path), describe: "at \(format(chosen.manifest.time)), the backup \(backup)")
            }
            if fromBackups { return try fromBackup(try source.feed(namespace)) }
            // The data first, then the feed: every write the data holds is in the feed read after it.
            let now = try source.data(namespace, at: path)
            let (entries, trimmedThrough) = try source.feed(namespace)
            if let refusal = coverage(entries, trimmedThrough: trimmedThrough, moment: moment) {
                guard !backups.backups(of: namespace).verified.isEmpty else {
                    throw Failure(refusal + " There are no backups of \(namespace) in \(backups.path) to start from either (hearth serve --backup-every).")
                }
                return try fromBackup((entries, trimmedThrough))
            }
            let first = FeedRestore.firstUndone(entries, at: moment)
            var root = Node.empty
            _ = root.set(path, to: now)
            let restored: Node
            do { restored = try FeedRestore.undo(entries[(first ?? entries.endIndex)...], on: root).child(at: path) } catch {
                throw Failure("cannot restore: \(error.description)")
            }
            let undone = entries.count - (first ?? entries.count)
            return Result(value: restored, describe: "\(describe(moment)): \(undone) later write\(undone == 1 ? "" : "s") undone")
        }

        /// The newest backup before the moment, and the feed's writes after it up to the moment.
        private func fromBackup(_ feed: ([FeedEntry], Int64)) throws -> Result {
            let (entries, trimmedThrough) = feed
            let found = backups.backups(of: namespace).verified
            let before = found.filter { backup in
                switch moment {
                case .time(let time): backup.manifest.time <= time
                case .beforePosition(let position): backup.manifest.position < position
                }
            }
            guard let base = before.last else {
                let oldest = found.first.map { " (the oldest is from \(format($0.manifest.time)))" } ?? ""
                let when: String
                switch moment {
                case .time(let time): when = "taken by \(format(time))"
                case .beforePosition(let position): when = "holding less than feed position \(position)"
                }
                throw Failure("no backup of \(namespace) in \(backups.path) was \(when)\(oldest): 'hearth backups list' shows them.")
            }
            let name = base.directory.split(separator: "/").last.map(String.init) ?? base.directory
            guard trimmedThrough <= base.manifest.position else {
                throw Failure("the change feed no longer holds the writes between the backup \(name) (\(format(base.manifest.time))) and \(describe(moment)); that backup itself can be restored: hearth restore \(namespace) --backup \(name).")
            }
            let later = entries.filter { $0.position > base.manifest.position }
            let stop = FeedRestore.firstUndone(later, at: moment) ?? later.count
            let restored: Node
            do { restored = try FeedRestore.redo(later[..<stop], on: try BackupMaker.load(base, checkingPages: false)) } catch let failure as FeedRestore.Failure {
                throw Failure("cannot restore: \(failure.description)")
            }
            return Result(value: restored.child(at: path), describe: "\(describe(moment)): the backup \(name) and \(stop) write\(stop == 1 ? "" : "s") after it")
        }

        private func named(_ name: String) throws -> BackupDirectory.Backup {
            guard let backup = backups.backups(of: namespace).verified.first(where: { $0.directory.hasSuffix("/" + name) }) else {
                throw Failure("no verified backup \(name) of \(namespace) in \(backups.path): 'hearth backups list \(namespace)' shows them.")
            }
            return backup
        }
    }
}
