import HearthCore

/// What a scheduled backup holds (docs/operations.md, "Backups"), written as `backup.json` in the
/// backup's directory once its data has been copied, read back and checked. A directory without one is
/// a backup that did not finish: never listed, never restored from, removed by the next round.
///
///     {"namespace":"demo","time":1796000000000,"position":40960,"format":"sqlite","dataFile":"demo.sqlite",
///      "bytes":1234567,"hash":"…","catchUpEntries":3,"seconds":0.42}
public struct BackupManifest: Sendable, Equatable {
    public static let fileName = "backup.json"
    /// The writes committed while the copy was read, as a `/.feed.json` page: done again over the copy,
    /// they make it the namespace exactly at ``position``.
    public static let catchUpFileName = "catchup.json"

    /// How the data is kept.
    public enum Format: String, Sendable {
        /// The namespace's SQLite file, copied with SQLite's online backup API (its feed table too).
        case sqlite
        /// Firebase's export JSON, from one PostgreSQL snapshot.
        case json
    }

    public var namespace: String
    /// When the change feed's head was read after the copy (ms since the epoch): the backup is the
    /// namespace with every write committed then.
    public var time: Int64
    /// The change feed's head then: the backup holds every entry through it and none after (0: empty).
    public var position: Int64
    public var format: Format
    /// The data's file name, in the backup's directory.
    public var dataFile: String
    /// The data's and the catch-up's bytes on disk.
    public var bytes: Int64
    /// The tree's hash (as ETags are made) when read back: what a later verification must find again.
    public var hash: String
    /// How many writes the catch-up file holds.
    public var catchUpEntries: Int
    /// How long making and checking it took.
    public var seconds: Double

    public init(
        namespace: String, time: Int64, position: Int64, format: Format, dataFile: String, bytes: Int64, hash: String,
        catchUpEntries: Int, seconds: Double
    ) {
        self.namespace = namespace
        self.time = time
        self.position = position
        self.format = format
        self.dataFile = dataFile
        self.bytes = bytes
        self.hash = hash
        self.catchUpEntries = catchUpEntries
        self.seconds = seconds
    }

    public var json: String {
        "{\"namespace\":\(Node(namespace).json()),\"time\":\(time),\"position\":\(position),\"format\":\"\(format.rawValue)\","
            + "\"dataFile\":\(Node(dataFile).json()),\"bytes\":\(bytes),\"hash\":\(Node(hash).json()),"
            + "\"catchUpEntries\":\(catchUpEntries),\"seconds\":\((seconds * 1000).rounded() / 1000)}"
    }

    /// Reads a manifest back, checking every field.
    ///
    /// - Throws: ``StorageError`` (`.corrupt`) naming what is missing or wrong.
    public init(json text: String) throws(StorageError) {
        let node: Node
        do { node = try Node(json: text) } catch { throw Self.invalid("it is not JSON (\(error.message))") }
        func string(_ key: String) throws(StorageError) -> String {
            guard let value = node.child(ChildKey(key)).stringValue, !value.isEmpty else { throw Self.invalid("\(key) is missing") }
            return value
        }
        func integer(_ key: String) throws(StorageError) -> Int64 {
            guard let number = node.child(ChildKey(key)).numberValue, let value = Int64(exactly: number), value >= 0 else {
                throw Self.invalid("\(key) is not a whole number")
            }
            return value
        }
        guard let format = Format(rawValue: try string("format")) else { throw Self.invalid("format is neither sqlite nor json") }
        let dataFile = try string("dataFile")
        // Only a file name: a manifest never points outside its own directory.
        guard !dataFile.contains("/"), !dataFile.hasPrefix(".") else { throw Self.invalid("dataFile is not a file name") }
        self.init(
            namespace: try string("namespace"), time: try integer("time"), position: try integer("position"), format: format,
            // An empty namespace's hash is empty.
            dataFile: dataFile, bytes: try integer("bytes"), hash: node.child(ChildKey("hash")).stringValue ?? "",
            catchUpEntries: Int(try integer("catchUpEntries")), seconds: node.child(ChildKey("seconds")).numberValue ?? 0)
    }

    private static func invalid(_ why: String) -> StorageError {
        StorageError(.corrupt, "a backup's \(fileName) is damaged: \(why). Remove that backup's directory; the other backups are unaffected.")
    }
}
