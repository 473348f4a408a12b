import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import HearthCore
import HearthTriggers

/// `hearth restore NS (--at TIME | --before-position P) [--path /p] [--into NEW_NS | --in-place] [--url URL]
/// [--data DIR] [--token TOKEN]`: namespace NS (or one location of it) as it was at an earlier moment,
/// through the running server (docs/operations.md, "Point-in-time restore"): reads the data now, then the
/// change feed, undoes every write after the moment (``FeedRestore``) and writes the result as an admin:
/// into another namespace by default (`NS-restored-<time>`), or in place, where the restore is itself a
/// write in the history and can be undone the same way.
enum RestoreCommand {
    static let usage = """
        Usage: hearth restore NS (--at 2026-12-05T10:02:00.123Z | --before-position P | --backup NAME) [--path /location]
                              [--into NEW_NS | --in-place] [--from-backups] [--backup-dir DIR]
                              [--url URL] [--token TOKEN] [--data DIR | --storage URL]
        """

    static func run<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ arguments: [String], output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        if arguments.contains(where: { $0 == "-h" || $0 == "--help" }) {
            print(usage, to: &output)
            print("Rebuilds the data as it was from the change feed (as far back as its retention), else from the newest backup before that moment and the writes after it (--from-backups: always so), and writes it into NEW_NS (default NS-restored-<time>) or, with --in-place, over NS. Through the running server at --url; with none running, directly in --data DIR or --storage URL (docs/operations.md).", to: &output)
            return .success
        }
        guard let parsed = CommandArguments.parse(
            arguments, valueOptions: ["--at", "--before-position", "--path", "--into", "--url", "--data", "--token", "--storage", "--backup", "--backup-dir"], command: "restore",
            errorOutput: &errorOutput)
        else { return .usageError }
        let options = parsed.options
        let inPlace = parsed.positional.contains("--in-place")
        let positional = parsed.positional.filter { $0 != "--in-place" && $0 != "--from-backups" }
        guard positional.count == 1 else {
            print(usage, to: &errorOutput)
            return .usageError
        }
        let namespace = positional[0]
        let moment: FeedRestore.Moment
        switch (options["--at"], options["--before-position"]) {
        case (let text?, nil):
            guard let time = parseTime(text) else {
                print("hearth restore: --at takes a time such as 2026-12-05T10:02:00.123Z (UTC, or with an offset), not '\(text.prefix(40))'.", to: &errorOutput)
                return .usageError
            }
            moment = .time(time)
        case (nil, let text?):
            guard let position = Int64(text), position > 0 else {
                print("hearth restore: --before-position takes a feed position (a whole number, as /.history.json shows), not '\(text.prefix(20))'.", to: &errorOutput)
                return .usageError
            }
            moment = .beforePosition(position)
        case (nil, nil) where options["--backup"] != nil:
            moment = .beforePosition(Int64.max)  // unused: a named backup is restored as it is
        default:
            print("hearth restore: give the moment with --at TIME or --before-position P (one of them), or a backup with --backup NAME.", to: &errorOutput)
            return .usageError
        }
        if inPlace && options["--into"] != nil {
            print("hearth restore: --into and --in-place say different things; give one.", to: &errorOutput)
            return .usageError
        }
        let pathText = options["--path"] ?? "/"
        guard pathText.hasPrefix("/") else {
            print("hearth restore: --path is a location such as /jokes.", to: &errorOutput)
            return .usageError
        }
        let path = Path(pathText)
        let target = inPlace ? namespace : options["--into"] ?? options["--backup"].map { "\(namespace)-restored-\($0)" } ?? defaultTarget(namespace, moment)
        let dataDirectory = options["--data"] ?? "hearth-data"
        let server = Server(
            url: options["--url"] ?? "http://127.0.0.1:9000",
            credential: AdminRequest.credential(token: options["--token"], dataDirectory: dataDirectory))
        let backups = BackupDirectory(path: options["--backup-dir"] ?? BackupDirectory.standard(dataDirectory: dataDirectory))
        let plan = Plan(
            namespace: namespace, path: path, moment: moment, fromBackups: parsed.positional.contains("--from-backups"),
            backup: options["--backup"], backups: backups)

        do {
            func restore(with source: any RestoreSource) throws -> Plan.Result {
                let restored = try plan.run(source)
                try source.put(target, at: path, restored.value)
                return restored
            }
            let restored: Plan.Result
            do { restored = try restore(with: server) } catch let unreachable as Unreachable {
                // No server (nothing was read or written through one): the storage itself, when the
                // command says where it is.
                guard options["--data"] != nil || options["--storage"] != nil else { throw Failure(unreachable.message) }
                let store = try DataStore.choose(storage: options["--storage"], dataDirectory: dataDirectory)
                print("No server answers at \(server.url): restoring in \(store.location) directly (keep the server stopped until this is done).", to: &output)
                restored = try restore(with: Offline(store: store))
            }
            print("Restored \(path.slashed) of \(namespace) as it was \(restored.describe) into \(target)\(inPlace ? " (in place: this restore is itself in the history)" : "").", to: &output)
            return .success
        } catch let failure as Failure {
            print("hearth restore: \(failure.message)", to: &errorOutput)
            return .failure
        } catch let invalid as DataStore.Invalid {
            print("hearth restore: \(invalid.message).", to: &errorOutput)
            return .usageError
        } catch {
            print("hearth restore: \(error)", to: &errorOutput)
            return .failure
        }
    }

    struct Failure: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// Why the retained feed cannot reach back to `moment`, if it cannot.
    static func coverage(_ entries: [FeedEntry], trimmedThrough: Int64, moment: FeedRestore.Moment) -> String? {
        guard trimmedThrough > 0 else { return nil }  // the feed holds every write the namespace ever had
        switch moment {
        case .beforePosition(let position) where position <= trimmedThrough:
            return "position \(position) is older than the change feed keeps (retention removed everything through \(trimmedThrough))."
        case .time(let time) where entries.first.map({ $0.time > time }) ?? true:
            let since = entries.first.map { " (it keeps writes from \(format($0.time)) on)" } ?? ""
            return "\(format(time)) is older than the change feed keeps\(since): retention removed what it would take."
        default:
            return nil
        }
    }

    static func describe(_ moment: FeedRestore.Moment) -> String {
        switch moment {
        case .time(let time): "at \(format(time))"
        case .beforePosition(let position): "just before position \(position)"
        }
    }

    static func defaultTarget(_ namespace: String, _ moment: FeedRestore.Moment) -> String {
        switch moment {
        case .time(let time):
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyyMMdd-HHmmss"
            return "\(namespace)-restored-\(formatter.string(from: Date(timeIntervalSince1970: Double(time) / 1000)))"
        case .beforePosition(let position): return "\(namespace)-restored-\(position)"
        }
    }

    /// Milliseconds since the epoch of an ISO 8601 time, with or without fractional seconds.
    static func parseTime(_ text: String) -> Int64? {
        let withFraction = ISO8601DateFormatter()
        withFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let plain = ISO8601DateFormatter()
        guard let date = withFraction.date(from: text) ?? plain.date(from: text) else { return nil }
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    static func format(_ time: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(time) / 1000))
    }
}
