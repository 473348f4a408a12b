import HearthCore
import HearthSQLite
import HearthStorage
#if canImport(Glibc)
    import Glibc
#endif

/// `hearth export`, `hearth import` and `hearth backup`: a namespace's data in and out of
/// `<data>/<namespace>.sqlite`, in Firebase's JSON export format (with `.priority`).
enum DataCommands {
    static let defaultDataDirectory = "./hearth-data"

    struct Arguments {
        var positional: [String] = []
        var dataDirectory = DataCommands.defaultDataDirectory
    }

    static func parse(_ arguments: [String]) -> Arguments? {
        var parsed = Arguments()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--data" {
                guard index + 1 < arguments.count else { return nil }
                parsed.dataDirectory = arguments[index + 1]
                index += 2
            } else if argument.hasPrefix("--data=") {
                parsed.dataDirectory = String(argument.dropFirst("--data=".count))
                index += 1
            } else if argument.hasPrefix("-") {
                return nil
            } else {
                parsed.positional.append(argument)
                index += 1
            }
        }
        return parsed
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
        guard let parsed = parse(arguments), parsed.positional.count == 1 else {
            print("Usage: hearth export NAMESPACE [--data DIR]  (writes JSON to standard output)", to: &errorOutput)
            return .usageError
        }
        let namespace = parsed.positional[0]
        do {
            let engine = try SQLiteStorageEngine(directory: parsed.dataDirectory, namespace: namespace, create: false)
            defer { engine.close() }
            let root = try engine.load { progress in progressLine("hearth export: read \(progress.done) records") }
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
        guard let parsed = parse(arguments), parsed.positional.count == 2 else {
            print("Usage: hearth import NAMESPACE FILE.json [--data DIR]  (replaces the namespace's data)", to: &errorOutput)
            return .usageError
        }
        let (namespace, file) = (parsed.positional[0], parsed.positional[1])
        let clock = ContinuousClock()
        let start = clock.now
        do {
            // Streamed: the file is read in 8 MB steps and written as it is read, in one transaction, so
            // memory stays bounded whatever the export's size (docs/storage.md).
            let descriptor = open(file, O_RDONLY)
            guard descriptor >= 0 else {
                throw StorageError(.notFound, "cannot read \(file): \(String(cString: strerror(errno))). Check the file name.")
            }
            defer { close(descriptor) }
            var status = stat()
            let byteCount = fstat(descriptor, &status) == 0 ? Int(status.st_size) : nil
            let engine = try SQLiteStorageEngine(directory: parsed.dataDirectory, namespace: namespace)
            defer { engine.close() }
            let records = try engine.importJSON(from: descriptor, byteCount: byteCount) { progress in
                let percent = progress.bytesTotal.map { $0 > 0 ? " (\(progress.bytesRead * 100 / $0)%)" : "" } ?? ""
                progressLine("hearth import: read \(progress.bytesRead / 1_000_000) MB\(percent), wrote \(progress.recordsWritten) records")
            }
            let seconds = (clock.now - start).components.seconds
            print("Imported \(records) records from \(file) into \(engine.path) in \(seconds) s.", to: &output)
            return .success
        } catch {
            print("hearth import: \(error)", to: &errorOutput)
            return .failure
        }
    }

    static func backup<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ arguments: [String], output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        guard let parsed = parse(arguments), parsed.positional.count == 2 else {
            print("Usage: hearth backup NAMESPACE FILE [--data DIR]  (a consistent copy, while hearth runs)", to: &errorOutput)
            return .usageError
        }
        let (namespace, file) = (parsed.positional[0], parsed.positional[1])
        do {
            let engine = try SQLiteStorageEngine(directory: parsed.dataDirectory, namespace: namespace, create: false)
            defer { engine.close() }
            try engine.backup(to: file) { progress in
                if let total = progress.total, total > 0 {
                    progressLine("hearth backup: copied \(progress.done) of \(total) pages")
                }
            }
            print("Backed up \(engine.path) to \(file).", to: &output)
            return .success
        } catch {
            print("hearth backup: \(error)", to: &errorOutput)
            return .failure
        }
    }
}
