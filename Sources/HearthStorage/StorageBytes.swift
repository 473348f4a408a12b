import HearthCore

/// The pieces of the storage engines' binary encodings (a logged batch, a change-feed entry): varints,
/// paths as a key count and each key's UTF-8 bytes, length-prefixed slices, and a reader that checks
/// every bound and reports a cut-short encoding as `.corrupt` data.
enum StorageBytes {
    static func append(_ path: Path, to bytes: inout [UInt8]) {
        appendVarint(path.count, to: &bytes)
        for key in path.keys {
            appendVarint(key.string.utf8.count, to: &bytes)
            bytes.append(contentsOf: key.string.utf8)
        }
    }

    static func appendVarint(_ value: Int, to bytes: inout [UInt8]) {
        var rest = UInt(value)
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// A length and the bytes.
    static func appendSlice(_ slice: some Collection<UInt8>, to bytes: inout [UInt8]) {
        appendVarint(slice.count, to: &bytes)
        bytes.append(contentsOf: slice)
    }

    /// Reads an encoding front to back; every read checks the bounds.
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0
        /// What is being read, for errors: "a logged write".
        var what = "a logged write"

        init(bytes: UnsafeRawBufferPointer, what: String = "a logged write") {
            self.bytes = bytes
            self.what = what
        }

        var isAtEnd: Bool { offset >= bytes.count }

        func truncated() -> StorageError {
            StorageError(.corrupt, "\(what) is truncated at byte \(offset) of \(bytes.count).")
        }

        mutating func byte() throws(StorageError) -> UInt8 {
            guard offset < bytes.count else { throw truncated() }
            defer { offset += 1 }
            return bytes[offset]
        }

        /// A varint that is a length or a count: no more than the bytes there are.
        mutating func varint() throws(StorageError) -> Int {
            let value = try number()
            guard value <= Int64(bytes.count) else { throw truncated() }
            return Int(value)
        }

        /// A varint that is not a length (a time): any value up to `Int.max`.
        mutating func number() throws(StorageError) -> Int64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let next = try byte()
                guard shift < 63 else { throw StorageError(.corrupt, "\(what) has a number that overflows at byte \(offset - 1).") }
                value |= UInt64(next & 0x7F) << shift
                if next < 0x80 { break }
                shift += 7
            }
            guard value <= UInt64(Int64.max) else { throw StorageError(.corrupt, "\(what) has a number that overflows.") }
            return Int64(value)
        }

        mutating func slice() throws(StorageError) -> UnsafeRawBufferPointer {
            let count = try varint()
            guard count <= bytes.count - offset else { throw truncated() }
            defer { offset += count }
            return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
        }

        mutating func path() throws(StorageError) -> Path {
            let count = try varint()
            var keys: [ChildKey] = []
            keys.reserveCapacity(count)
            for _ in 0..<count {
                keys.append(ChildKey(String(decoding: try slice(), as: UTF8.self)))
            }
            return Path(keys)
        }

        mutating func node() throws(StorageError) -> Node {
            let json = try slice()
            do {
                return try Node(jsonBytes: json)
            } catch {
                throw StorageError(.corrupt, "\(what) holds a value that does not parse (\(error)).")
            }
        }
    }
}
