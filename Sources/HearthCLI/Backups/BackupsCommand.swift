import Foundation
import HearthStorage

/// `hearth backups list [NS] [--backup-dir DIR] [--data DIR | --storage URL]` and `hearth backups verify
/// NS [BACKUP]`: the scheduled backups (`hearth serve --backup-every`), with their size and the span of
/// time each can restore to, and a check that one still holds what it held when made.
enum BackupsCommand {
    static let usage = """
        Usage: hearth backups list [NAMESPACE] [--backup-dir DIR] [--data DIR | --storage URL]
               hearth backups verify NAMESPACE [BACKUP] [--backup-dir DIR] [--data DIR]
        """

    static func run<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ arguments: [String], output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        if arguments.contains(where: { $0 == "-h" || $0 == "--help" }) {
            print(usage, to: &output)
            print("Backups are made by 'hearth serve --backup-every 1h --backup-keep 48' (docs/operations.md); 'hearth restore NS --at TIME' uses them.", to: &output)
            return .success
        }
        guard let parsed = CommandArguments.parse(
            arguments, valueOptions: ["--backup-dir", "--data", "--storage"], command: "backups", errorOutput: &errorOutput)
        else { return .usageError }
        let dataDirectory = parsed.options["--data"] ?? ProcessInfo.processInfo.environment["HEARTH_DATA"] ?? "./hearth-data"
        let backups = BackupDirectory(path: parsed.options["--backup-dir"] ?? BackupDirectory.standard(dataDirectory: dataDirectory))
        let store: DataStore
        do { store = try DataStore.choose(storage: parsed.options["--storage"] ?? ProcessInfo.processInfo.environment["HEARTH_STORAGE"], dataDirectory: dataDirectory) } catch {
            print("hearth backups: \(error.message).", to: &errorOutput)
            return .usageError
        }
        switch parsed.positional.first {
        case "list" where parsed.positional.count <= 2:
            return list(parsed.positional.dropFirst().first, backups, store, output: &output, errorOutput: &errorOutput)
        case "verify" where (2...3).contains(parsed.positional.count):
            return verify(parsed.positional[1], parsed.positional.count == 3 ? parsed.positional[2] : nil, backups, output: &output, errorOutput: &errorOutput)
        default:
            print(usage, to: &errorOutput)
            return .usageError
        }
    }

    static func list<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ namespace: String?, _ backups: BackupDirectory, _ store: DataStore, output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        let namespaces = namespace.map { [$0] } ?? backups.namespaces()
        var rows: [[String]] = []
        for name in namespaces {
            let found = backups.backups(of: name)
            for (directory, why) in found.damaged { print("hearth backups: \(directory): \(why)", to: &errorOutput) }
            guard !found.verified.isEmpty else { continue }
            let trimmed = liveFeedTrimmedThrough(name, store)
            for backup in found.verified.reversed() {
                let manifest = backup.manifest
                let reach = trimmed.map { manifest.position >= $0 ? "→ now" : "only" } ?? "only (no live feed)"
                rows.append([name, RestoreCommand.format(manifest.time), reach, size(manifest.bytes), String(manifest.position), (backup.directory as NSString).lastPathComponent])
            }
        }
        guard !rows.isEmpty else {
            print("No backups\(namespace.map { " of '\($0)'" } ?? "") in \(backups.path). Make them with 'hearth serve --backup-every 1h' (docs/operations.md).", to: &output)
            return namespace == nil ? .success : .failure
        }
        let header = ["NAMESPACE", "TIME (UTC)", "RESTORES TO", "SIZE", "POSITION", "BACKUP"]
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        for row in [header] + rows {
            print(zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ").trimmingCharacters(in: .whitespaces), to: &output)
        }
        print("RESTORES TO: '→ now' when the change feed still holds every write since the backup (hearth restore NS --at any time from then on), 'only' when just the backup's own instant can be restored.", to: &output)
        return .success
    }

    /// The last position the namespace's live feed no longer holds, or nil when it cannot be read.
    static func liveFeedTrimmedThrough(_ namespace: String, _ store: DataStore) -> Int64? {
        guard let engine = try? store.openForReading(namespace) else { return nil }
        defer { engine.close() }
        return try? FeedPages.read(engine, after: Int64.max, limit: 0).trimmedThrough
    }

    static func verify<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ namespace: String, _ name: String?, _ backups: BackupDirectory, output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        let found = backups.backups(of: namespace).verified
        let chosen = name.map { name in found.filter { ($0.directory as NSString).lastPathComponent == name } } ?? found
        guard !chosen.isEmpty else {
            print("hearth backups: no backup\(name.map { " \($0)" } ?? "") of '\(namespace)' in \(backups.path) ('hearth backups list' shows them).", to: &errorOutput)
            return .failure
        }
        var failed = false
        for backup in chosen {
            do {
                try BackupMaker.verify(backup)
                print("\((backup.directory as NSString).lastPathComponent): verified (hash \(backup.manifest.hash)).", to: &output)
            } catch {
                failed = true
                print("hearth backups: \(error.message)", to: &errorOutput)
            }
        }
        return failed ? .failure : .success
    }

    /// `1.2 MB`.
    static func size(_ bytes: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f", value) + " " + units[unit]
    }
}
