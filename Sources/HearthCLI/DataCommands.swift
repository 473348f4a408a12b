import Foundation
import HearthCore
import HearthPostgres
import HearthSQLite
import HearthStorage
#if canImport(Glibc)
    import Glibc
#endif

/// `hearth export`, `hearth import` and `hearth backup`: a namespace's data in and out of
/// `<data>/<namespace>.sqlite`, or of PostgreSQL with `--storage URL` (or `HEARTH_STORAGE`), in
/// Firebase's JSON export format (with `.priority`).
enum DataCommands {
    static let defaultDataDirectory = "./hearth-data"

    struct Arguments {
        var positional: [String] = []
        var dataDirectory = DataCommands.defaultDataDirectory
        /// `--storage`, else `HEARTH_STORAGE`.
        var storage: String?
    }

    /// The arguments; nil when they are not `[--data DIR] [--storage URL]` and names.
    static func parse(_ arguments: [String], environment: [String: String] = [:]) -> Arguments? {
        var parsed = Arguments()
        parsed.storage = environment["HEARTH_STORAGE"]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if let option = ["--data", "--storage"].first(where: { argument == $0 || argument.hasPrefix($0 + "=") }) {
                let value: String
                if argument == option {
                    guard index + 1 < arguments.count else { return nil }
                    value = arguments[index + 1]
                    index += 2
                } else {
                    value = String(argument.dropFirst(option.count + 1))
                    index += 1
                }
                if option == "--data" { parsed.dataDirectory = value } else { parsed.storage = value }
            } else if argument.hasPrefix("-") {
                return nil
            } else {
                parsed.positional.append(argument)
                index += 1
            }
        }
        return parsed
    }

    /// The command's arguments and where its namespace is; nil after printing what is wrong (the usage,
    /// or a `--storage` that is not a PostgreSQL URL).
    private static func resolve<ErrorOutput: TextOutputStream>(
        _ command: String, _ arguments: [String], names: Int, usage: String, errorOutput: inout ErrorOutput
    ) -> (names: [String], store: DataStore)? {
        guard let parsed = parse(arguments, environment: ProcessInfo.processInfo.environment), parsed.positional.count == names else {
            print(usage, to: &errorOutput)
            return nil
        }
        do {
            return (parsed.positional, try DataStore.choose(storage: parsed.storage, dataDirectory: parsed.dataDirectory))
        } catch {
            print("hearth \(command): \(error.message).", to: &errorOutput)
            return nil
        }
    }

    /// Progress lines go straight to standard error, from whichever thread reports them, and only when
    /// `hearth` runs as a program (in-process tests get none).
    static func progressLine(_ text: String) {
        guard HearthCommand.liveProgress else { return }
        var stream = FileDescriptorOutputStream.standardError
        stream.write(text + "\n")
    }

    static func export<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ arguments: [String], output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        let usage = "Usage: hearth export NAMESPACE [--data DIR | --storage URL]  (writes JSON to standard output)"
        guard let (names, store) = resolve("export", arguments, names: 1, usage: usage, errorOutput: &errorOutput) else { return .usageError }
        do {
            let engine = try store.openExisting(names[0])
            defer { engine.close() }
            let progress = { (progress: LoadProgress) in progressLine("hearth export: read \(progress.done) records") }
            if let postgres = engine as? PostgresStorageEngine {
                // Streamed from the records to standard output: memory holds a chunk, not the tree.
                try postgres.writeExport(progress: progress) { chunk throws(StorageError) in
                    try PostgresStorageEngine.writeAll(chunk, to: STDOUT_FILENO, named: "standard output")
                }
                return .success
            }
            let root = try engine.load(progress: progress)
            try StorageJSON.write(root) { chunk in output.write(String(decoding: chunk, as: UTF8.self)) }
            return .success
        } catch {
            print("hearth export: \(error)", to: &errorOutput)
            return .failure
        }
    }

    static func importJSON<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ arguments: [String], output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        let usage = "Usage: hearth import NAMESPACE FILE.json [--data DIR | --storage URL]  (replaces the namespace's data)"
        guard let (names, store) = resolve("import", arguments, names: 2, usage: usage, errorOutput: &errorOutput) else { return .usageError }
        let (namespace, file) = (names[0], names[1])
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let descriptor = open(file, O_RDONLY)
            guard descriptor >= 0 else {
                throw StorageError(.notFound, "cannot read \(file): \(String(cString: strerror(errno))). Check the file name.")
            }
            defer { close(descriptor) }
            var status = stat()
            let byteCount = fstat(descriptor, &status) == 0 ? Int(status.st_size) : nil
            let report = { (read: Int, written: Int) in
                let percent = byteCount.map { $0 > 0 ? " (\(read * 100 / $0)%)" : "" } ?? ""
                progressLine("hearth import: read \(read / 1_000_000) MB\(percent), wrote \(written) records")
            }
            let (records, location) = try importFile(descriptor, byteCount: byteCount, into: namespace, of: store, report: report)
            let seconds = (clock.now - start).components.seconds
            print("Imported \(records) records from \(file) into \(location) in \(seconds) s.", to: &output)
            return .success
        } catch {
            print("hearth import: \(error)", to: &errorOutput)
            return .failure
        }
    }

    /// Replaces `namespace` with the export read from `descriptor`, all or nothing; returns the records
    /// written and where they went.
    ///
    /// Both engines stream the file: read in 8 MB steps and written as it is read, in one transaction,
    /// so memory stays bounded whatever the export's size (docs/storage.md).
    private static func importFile(
        _ descriptor: Int32, byteCount: Int?, into namespace: String, of store: DataStore, report: @escaping (Int, Int) -> Void
    ) throws -> (records: Int, location: String) {
        switch store {
        case .sqlite(let directory):
            let engine = try SQLiteStorageEngine(directory: directory, namespace: namespace)
            defer { engine.close() }
            let records = try engine.importJSON(from: descriptor, byteCount: byteCount) { progress in
                report(progress.bytesRead, progress.recordsWritten)
            }
            return (records, engine.path)
        case .postgres(let url):
            // Entered in the catalogue first, so the namespace exists even when the export is empty.
            try PostgresNamespaces(url: url).register(namespace)
            let engine = try PostgresStorageEngine(url: url, namespace: namespace)
            defer { engine.close() }
            let records = try engine.importJSON(from: descriptor, byteCount: byteCount) { progress in
                report(progress.bytesRead, progress.recordsWritten)
            }
            return (records, engine.location)
        }
    }

    static func backup<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ arguments: [String], output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        let usage = "Usage: hearth backup NAMESPACE FILE [--data DIR | --storage URL]  (a consistent copy, while hearth runs)"
        guard let (names, store) = resolve("backup", arguments, names: 2, usage: usage, errorOutput: &errorOutput) else { return .usageError }
        let (namespace, file) = (names[0], names[1])
        do {
            let engine = try store.openExisting(namespace)
            defer { engine.close() }
            switch store {
            case .sqlite:
                try engine.backup(to: file) { progress in
                    if let total = progress.total, total > 0 {
                        progressLine("hearth backup: copied \(progress.done) of \(total) pages")
                    }
                }
                print("Backed up \(engine.location) to \(file).", to: &output)
            case .postgres:
                // The namespace as Firebase's export JSON from one snapshot (docs/storage.md, PostgreSQL).
                try engine.backup(to: file) { progress in progressLine("hearth backup: read \(progress.done) records") }
                print("Backed up \(engine.location) to \(file) (export JSON: hearth import restores it).", to: &output)
            }
            return .success
        } catch {
            print("hearth backup: \(error)", to: &errorOutput)
            return .failure
        }
    }
}
