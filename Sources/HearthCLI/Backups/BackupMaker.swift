import Dispatch
import Foundation
import HearthCore
import HearthSQL
import HearthSQLite
import HearthStorage
import HearthTriggers

/// Makes one backup of a namespace while the server writes on (docs/operations.md, "Backups"), reads it
/// back and checks it, and loads a backup for a restore.
///
/// The copy is one consistent snapshot (SQLite's online backup API, or one PostgreSQL query for export
/// JSON), taken without holding writers. Which feed position it holds is pinned by reading the feed's
/// head before (P1) and after (P2) the copy: the copy holds every write through P1 and perhaps some up
/// to P2, so the writes P1…P2 are saved beside it (the catch-up) and done again over it when it is
/// loaded. Writes hold absolute values, so doing one the copy already holds again changes nothing once
/// the later ones are done too: loaded, a backup is the namespace exactly at P2.
enum BackupMaker {
    /// Copies `namespace` (opened as `engine`) into a new directory of `backups`, checks that the copy
    /// reads back whole, and writes its manifest last.
    ///
    /// - Throws: ``StorageError``; the unfinished directory is removed.
    static func make(
        namespace: String, engine: any StorageEngine, format: BackupManifest.Format, into backups: BackupDirectory,
        clock: () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
    ) throws(StorageError) -> BackupDirectory.Backup {
        let started = clock()
        let directory = try backups.create(namespace: namespace, time: started)
        do throws(StorageError) {
            let before = try head(of: engine)
            let dataFile = namespace + (format == .sqlite ? ".sqlite" : ".json")
            let dataPath = (directory as NSString).appendingPathComponent(dataFile)
            try engine.backup(to: dataPath, progress: nil)
            let after = try head(of: engine)
            let time = clock()
            let catchUp = try entries(of: engine, after: before, through: after)
            let catchUpPath = (directory as NSString).appendingPathComponent(BackupManifest.catchUpFileName)
            try write(catchUpJSON(catchUp), to: catchUpPath)
            var manifest = BackupManifest(
                namespace: namespace, time: time, position: after, format: format, dataFile: dataFile,
                bytes: fileSize(dataPath) + fileSize(catchUpPath), hash: "", catchUpEntries: catchUp.count, seconds: 0)
            // Read back: every record decodes, the catch-up applies; its hash is what verifying finds again.
            manifest.hash = try load(BackupDirectory.Backup(directory: directory, manifest: manifest)).hash
            manifest.seconds = Double(clock() - started) / 1000
            try write(Array(manifest.json.utf8), to: (directory as NSString).appendingPathComponent(BackupManifest.fileName))
            return BackupDirectory.Backup(directory: directory, manifest: manifest)
        } catch {
            backups.remove(directory)
            throw error
        }
    }

    /// The namespace as `backup` holds it: its data with its catch-up done again. `checkingPages` runs
    /// SQLite's integrity_check on the copy first (when it is made and verified; a restore skips it, the
    /// backup having passed it then: on a gigabyte it takes longer than the restore).
    ///
    /// - Throws: ``StorageError`` (`.corrupt` naming the backup) when a file is damaged or missing.
    static func load(_ backup: BackupDirectory.Backup, checkingPages: Bool = true) throws(StorageError) -> Node {
        var root: Node
        switch backup.manifest.format {
        case .sqlite:
            let file = backup.dataPath
            if checkingPages {
                do throws(SQLiteError) {
                // The copy alone, read-only in spirit: a page-level check first, then every record decoded.
                    let connection = try SQLiteConnection(path: file, create: false)
                    defer { connection.close() }
                    let verdict = try connection.text("PRAGMA integrity_check") ?? ""
                    guard verdict == "ok" else { throw SQLiteError(code: .corrupt, message: String(verdict.prefix(200)), context: "checking \(file)") }
                } catch {
                    throw StorageError(.corrupt, "the backup \(backup.directory) is damaged (\(error)). Use another backup.")
                }
            }
            let engine = try SQLiteStorageEngine(
                directory: backup.directory, namespace: (backup.manifest.dataFile as NSString).deletingPathExtension, create: false)
            defer { engine.close() }
            root = try engine.load(progress: nil)
        case .json:
            guard let data = FileManager.default.contents(atPath: backup.dataPath) else {
                throw StorageError(.corrupt, "the backup \(backup.directory) has no \(backup.manifest.dataFile). Use another backup.")
            }
            do { root = try Node(jsonBytes: [UInt8](data)) } catch {
                throw StorageError(.corrupt, "the backup \(backup.dataPath) does not parse (\(error.message)). Use another backup.")
            }
        }
        guard let catchUp = FileManager.default.contents(atPath: backup.catchUpPath) else {
            throw StorageError(.corrupt, "the backup \(backup.directory) has no \(BackupManifest.catchUpFileName). Use another backup.")
        }
        do {
            let entries = try FeedEntry.page(json: [UInt8](catchUp)).entries
            return try FeedRestore.redo(entries[...], on: root)
        } catch {
            throw StorageError(.corrupt, "the backup \(backup.catchUpPath) does not apply (\(error)). Use another backup.")
        }
    }

    /// Loads `backup` and compares its hash with the one recorded when it was made.
    static func verify(_ backup: BackupDirectory.Backup) throws(StorageError) {
        let hash = try load(backup).hash
        guard hash == backup.manifest.hash else {
            throw StorageError(.corrupt, "the backup \(backup.directory) no longer holds what it held when made (hash \(hash), recorded \(backup.manifest.hash)). Use another backup.")
        }
    }

    /// The feed's newest position (0 when it has none).
    static func head(of engine: any StorageEngine) throws(StorageError) -> Int64 {
        let page = try FeedPages.read(engine, after: Int64.max, limit: 0)
        return page.head ?? page.trimmedThrough
    }

    /// The entries after `start` through `end`, all of them: retention must not have removed any.
    static func entries(of engine: any StorageEngine, after start: Int64, through end: Int64) throws(StorageError) -> [ChangeFeedPage.Entry] {
        var entries: [ChangeFeedPage.Entry] = []
        var after = start
        while after < end {
            let page = try FeedPages.read(engine, after: after, limit: 10_000)
            if page.needsResync(after: after) {
                throw StorageError(.io, "the change feed's retention removed writes made during the backup before they were read; the next round tries again (a larger --feed-max-bytes avoids this).")
            }
            guard let last = page.entries.last else { break }
            entries += page.entries.prefix { $0.position <= end }
            after = last.position
        }
        return entries
    }

    /// `entries` as a `/.feed.json` page.
    static func catchUpJSON(_ entries: [ChangeFeedPage.Entry]) -> [UInt8] {
        var out = Array(#"{"entries":["#.utf8)
        for (index, entry) in entries.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            entry.appendServed(to: &out)
        }
        out.append(contentsOf: #"],"trimmedThrough":0}"#.utf8)
        return out
    }

    /// Writes `bytes` to `path` (owner-only), synced before it counts.
    static func write(_ bytes: [UInt8], to path: String) throws(StorageError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw StorageError(.io, "cannot create \(path): \(String(cString: strerror(errno))).") }
        defer { close(descriptor) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw StorageError(.io, "cannot write \(path): \(String(cString: strerror(errno))).")
            }
            offset += written
        }
        guard fsync(descriptor) == 0 else { throw StorageError(.io, "cannot sync \(path): \(String(cString: strerror(errno))).") }
    }

    static func fileSize(_ path: String) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
    }
}

/// Reading a change feed from the command line, waiting for each page.
enum FeedPages {
    static func read(_ engine: any StorageEngine, after position: Int64, limit: Int) throws(StorageError) -> ChangeFeedPage {
        final class Box: @unchecked Sendable { var result: Result<ChangeFeedPage, StorageError>? }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        engine.readFeed(after: position, limit: limit) { result in
            box.result = result
            done.signal()
        }
        done.wait()
        guard let result = box.result else { throw StorageError(.io, "reading the change feed gave no answer") }
        return try result.get()
    }
}
