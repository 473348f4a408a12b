public import HearthCore

/// Change-feed entries as the engines store them, and as the feed serves them.
///
/// Stored: a compact binary form (``ChangeFeedEntry``, made when the database takes the write), copied
/// into the commit's transaction (JSON text cost storage.write a fifth of its throughput, binary a
/// fraction of that: docs/BENCHMARKS.md, storage.write.feed). Version 1: a version byte; the time as a varint; a flags byte (bit 0 an update,
/// bits 1–2 the auth type, bit 3 an auth id follows, bit 4 the earlier values were left out); the path
/// (`StorageBytes`); the data (a set: one value; an update: a count, then per value its relative path
/// and value); the auth id; the channel; then, unless left out, a count and per changed location its
/// path and earlier value. Values are length-prefixed `JSONFormat.lossless` JSON, as logged batches
/// hold them, so serving an entry copies them without parsing.
///
/// Served: a JSON object (``json(decoding:)``),
///
///     {"time":…,"type":"set","path":"/jokes/j1","data":{…},"authType":"app_user","authId":"ada",
///      "protocol":"rest","before":{"/jokes/j1":null}}
///
/// where an update's `data` maps relative paths to values and `before` maps each changed location to
/// its earlier value, or is `null` with `"beforeOmitted":true` when those took more than the
/// retention's `beforeBytesMax` bytes.
extension ChangeFeedRecord {
    static let encodingVersion: UInt8 = 1

    enum Flag {
        static let update: UInt8 = 1
        static let authShift: UInt8 = 1
        static let authMask: UInt8 = 0b110
        static let hasAuthId: UInt8 = 1 << 3
        static let beforeOmitted: UInt8 = 1 << 4
    }

    private static let authTypes: [ChangeFeedNote.AuthType] = [.appUser, .admin, .unauthenticated]

    /// The auth type's number in the flags byte (its index in `authTypes`).
    static func authIndex(_ type: ChangeFeedNote.AuthType) -> UInt8 {
        switch type {
        case .appUser: return 0
        case .admin: return 1
        case .unauthenticated: return 2
        }
    }

    /// The stored form's JSON object, as the feed serves it.
    ///
    /// - Throws: ``StorageError`` (`.corrupt`) when `encoded` is not such an entry.
    public static func json(decoding encoded: UnsafeRawBufferPointer) throws(StorageError) -> [UInt8] {
        var reader = StorageBytes.Reader(bytes: encoded, what: "a change-feed entry")
        let version = try reader.byte()
        guard version == encodingVersion else {
            throw StorageError(.corrupt, "a change-feed entry has an unknown format (version \(version)).")
        }
        let time = try reader.number()
        let flags = try reader.byte()
        let authIndex = Int((flags & Flag.authMask) >> Flag.authShift)
        guard authIndex < authTypes.count else { throw StorageError(.corrupt, "a change-feed entry has an unknown auth type.") }
        var out: [UInt8] = []
        out.reserveCapacity(encoded.count + 96)
        out.append(contentsOf: #"{"time":"#.utf8)
        out.append(contentsOf: String(time).utf8)
        out.append(contentsOf: flags & Flag.update != 0 ? #","type":"update","path":"#.utf8 : #","type":"set","path":"#.utf8)
        appendString(try reader.path().slashed, to: &out)
        out.append(contentsOf: #","data":"#.utf8)
        if flags & Flag.update != 0 {
            try appendObject(&reader, keyPrefix: "", to: &out)
        } else {
            out.append(contentsOf: try checkedValue(&reader))
        }
        out.append(contentsOf: #","authType":""#.utf8)
        out.append(contentsOf: authTypes[authIndex].rawValue.utf8)
        out.append(UInt8(ascii: "\""))
        if flags & Flag.hasAuthId != 0 {
            out.append(contentsOf: #","authId":"#.utf8)
            appendString(String(decoding: try reader.slice(), as: UTF8.self), to: &out)
        }
        out.append(contentsOf: #","protocol":"#.utf8)
        appendString(String(decoding: try reader.slice(), as: UTF8.self), to: &out)
        if flags & Flag.beforeOmitted != 0 {
            out.append(contentsOf: #","before":null,"beforeOmitted":true}"#.utf8)
        } else {
            out.append(contentsOf: #","before":"#.utf8)
            try appendObject(&reader, keyPrefix: "/", to: &out)
            out.append(UInt8(ascii: "}"))
        }
        guard reader.isAtEnd else { throw StorageError(.corrupt, "a change-feed entry has bytes after its end.") }
        return out
    }

    /// The locations a stored entry wrote (a set's path; an update's path joined with each of its
    /// relative paths), read without its values: what the feed's location index keys it by.
    ///
    /// - Throws: ``StorageError`` (`.corrupt`) when `encoded` is not such an entry.
    public static func writtenPaths(decoding encoded: UnsafeRawBufferPointer) throws(StorageError) -> [Path] {
        var reader = StorageBytes.Reader(bytes: encoded, what: "a change-feed entry")
        let version = try reader.byte()
        guard version == encodingVersion else {
            throw StorageError(.corrupt, "a change-feed entry has an unknown format (version \(version)).")
        }
        _ = try reader.number()
        let flags = try reader.byte()
        let path = try reader.path()
        guard flags & Flag.update != 0 else { return [path] }
        let count = try reader.varint()
        var paths: [Path] = []
        for _ in 0..<count {
            paths.append(path.appending(path: try reader.path()))
            _ = try reader.slice()
        }
        return paths
    }

    /// The entry as the feed serves it (encoded, then decoded: the one JSON form).
    public func json(beforeBytesMax: Int) -> [UInt8] {
        let entry = ChangeFeedEntry(note: note, before: before, beforeBytesMax: beforeBytesMax)
        return entry.bytes.withUnsafeBytes { encoded in
            guard let json = try? Self.json(decoding: encoded) else { preconditionFailure("an entry just encoded does not decode") }
            return json
        }
    }

    /// A count, then path and value pairs, as `{"path":value,…}` (nulls kept, unlike a tree's object).
    private static func appendObject(_ reader: inout StorageBytes.Reader, keyPrefix: String, to out: inout [UInt8]) throws(StorageError) {
        let count = try reader.varint()
        out.append(UInt8(ascii: "{"))
        for index in 0..<count {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            appendString(keyPrefix + (try reader.path()).description, to: &out)
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: try checkedValue(&reader))
        }
        out.append(UInt8(ascii: "}"))
    }

    /// A stored value's JSON, checked to parse before it is copied into an answer: a damaged file must
    /// give a clear error, never a reader broken JSON.
    private static func checkedValue(_ reader: inout StorageBytes.Reader) throws(StorageError) -> UnsafeRawBufferPointer {
        let start = reader.offset
        _ = try reader.node()
        reader.offset = start
        return try reader.slice()
    }

    /// A JSON string, escaped as the tree's own strings are.
    private static func appendString(_ string: String, to out: inout [UInt8]) {
        Node(string).appendJSON(to: &out, format: .rest)
    }
}
