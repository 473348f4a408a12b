import Foundation
import HearthCore
import HearthServer
import HearthSQL
import HearthStorage

/// Where scheduled backups are kept (`--backup-dir`, by default `backups` in the data directory): one
/// directory per namespace, one per backup inside it, named by its time (`20261205T100200123Z`), holding
/// the data, the catch-up and, once verified, `backup.json` (``BackupManifest``). Owner-only, like the
/// databases they copy.
struct BackupDirectory: Sendable {
    let path: String

    /// The default: `backups` under the data directory.
    static func standard(dataDirectory: String) -> String { (dataDirectory as NSString).appendingPathComponent("backups") }

    /// A verified backup: its directory and what it holds.
    struct Backup: Sendable {
        let directory: String
        let manifest: BackupManifest

        var dataPath: String { (directory as NSString).appendingPathComponent(manifest.dataFile) }
        var catchUpPath: String { (directory as NSString).appendingPathComponent(BackupManifest.catchUpFileName) }
    }

    /// The namespaces that have a directory here.
    func namespaces() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.filter { NamespaceName.isValid($0) && isDirectory(join(path, $0)) }.sorted()
    }

    /// `namespace`'s verified backups, oldest first, and the directories of backups that did not finish
    /// (no manifest) or whose manifest does not read (with why).
    func backups(of namespace: String) -> (verified: [Backup], unfinished: [String], damaged: [(String, String)]) {
        let folder = join(path, namespace)
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
        var verified: [Backup] = []
        var unfinished: [String] = []
        var damaged: [(String, String)] = []
        for name in names where !name.hasPrefix(".") {
            let directory = join(folder, name)
            guard isDirectory(directory) else { continue }
            guard let text = try? String(contentsOfFile: join(directory, BackupManifest.fileName), encoding: .utf8) else {
                unfinished.append(directory)
                continue
            }
            do { verified.append(Backup(directory: directory, manifest: try BackupManifest(json: text))) } catch {
                damaged.append((directory, error.message))
            }
        }
        return (verified.sorted { $0.manifest.time < $1.manifest.time }, unfinished, damaged)
    }

    /// A new, empty directory for a backup of `namespace` taken at `time`.
    func create(namespace: String, time: Int64) throws(StorageError) -> String {
        for directory in [path, join(path, namespace)] {
            let code = OwnerOnlyFiles.createDirectory(directory)
            if code != 0 { throw StorageError(.io, "cannot create the backup directory \(directory): \(String(cString: strerror(code))).") }
        }
        let directory = join(join(path, namespace), Self.stamp(time))
        // A leftover of the same millisecond (a crash just now) is replaced.
        try? FileManager.default.removeItem(atPath: directory)
        let code = OwnerOnlyFiles.createDirectory(directory)
        if code != 0 { throw StorageError(.io, "cannot create the backup directory \(directory): \(String(cString: strerror(code))).") }
        return directory
    }

    func remove(_ directory: String) { try? FileManager.default.removeItem(atPath: directory) }

    /// `20261205T100200123Z`: sorts as time does.
    static func stamp(_ time: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmssSSS'Z'"
        return formatter.string(from: Date(timeIntervalSince1970: Double(time) / 1000))
    }

    private func join(_ directory: String, _ name: String) -> String { (directory as NSString).appendingPathComponent(name) }

    private func isDirectory(_ path: String) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
    }

    /// What the console lists and restores from (``BackupCatalogue``).
    static func catalogue(_ backups: BackupDirectory) -> BackupCatalogue {
        BackupCatalogue(
            directory: backups.path,
            list: {
                backups.namespaces().flatMap { namespace in
                    backups.backups(of: namespace).verified.map { backup in
                        BackupCatalogue.Listed(name: (backup.directory as NSString).lastPathComponent, manifest: backup.manifest)
                    }
                }
            },
            load: { namespace, name throws in
                guard let backup = backups.backups(of: namespace).verified.first(where: { ($0.directory as NSString).lastPathComponent == name }) else {
                    throw StorageError(.notFound, "no verified backup \(name) of '\(namespace)' in \(backups.path).")
                }
                return try BackupMaker.load(backup)
            })
    }
}
