import HearthCore
import HearthProtocol
import HearthWire

/// Write payloads as JSON bytes (a REST body, a realtime `d`), checked as Firebase checks them.
enum WriteBody {
    static let unparsable = "Invalid data; couldn't parse JSON object, array, or value."

    /// A write's ID (a realtime `wid`, docs/protocol.md §2.6.1), nil when it has none: a JSON string of 1
    /// to `Limits.writeIDBytesMax` printable ASCII characters.
    static func writeID(_ bytes: [UInt8]?) throws(WriteFailure) -> String? {
        guard let bytes else { return nil }
        guard let id = (try? Node(jsonBytes: bytes))?.stringValue, (1...Limits.writeIDBytesMax).contains(id.utf8.count),
            id.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else {
            throw .invalid("Invalid write ID 'wid': a string of 1 to \(Limits.writeIDBytesMax) printable ASCII characters, without spaces.")
        }
        return id
    }

    /// A value to write at `path`.
    static func value(_ bytes: [UInt8], at path: Path) throws(WriteFailure) -> Node {
        do {
            return try Node(jsonBytes: bytes, options: .init(validation: .write(at: path)))
        } catch {
            throw .invalid(error.code == .invalidJSON ? unparsable : error.message)
        }
    }

    /// A merge at `path`: a JSON object of relative paths to values, none of them overlapping.
    static func update(_ bytes: [UInt8], at path: Path) throws(WriteFailure) -> [(Path, Node)] {
        guard let entries = JSONObjectSplitter.split(bytes) else {
            if (try? Node(jsonBytes: bytes)) != nil { throw .invalid("Invalid data; PATCH needs a JSON object of paths to values.") }
            throw .invalid(unparsable)
        }
        var values: [(Path, Node)] = []
        for (key, raw) in entries {
            let relative = Path(key)
            guard !relative.isRoot else { throw .invalid("Invalid key in PATCH: '\(key)'") }
            let full = path.appending(path: relative)
            do throws(DataError) {
                try KeyValidation.validate(writePath: full)
                values.append((relative, try Node(jsonBytes: Array(raw), options: .init(validation: .write(at: full)))))
            } catch {
                throw .invalid(error.code == .invalidJSON ? unparsable : error.message)
            }
        }
        if let (a, b) = Path.firstOverlap(in: values.map(\.0)) {
            throw .invalid("Invalid data; paths '\(a)' and '\(b)' overlap in one update")
        }
        return values
    }
}
