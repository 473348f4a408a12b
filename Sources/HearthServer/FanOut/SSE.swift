import HearthCore

/// Server-Sent Events framing (docs/protocol.md §6.7): `event:` line, one `data:` line,
/// blank line; and the event a committed write means to a stream at one location.
enum SSE {
    static let keepAlive = Array("event: keep-alive\ndata: null\n\n".utf8)
    static let cancel = Array("event: cancel\ndata: null\n\n".utf8)
    /// Python's SSE client reconnects on exactly this text (§6.7).
    static let authRevoked = Array("event: auth_revoked\ndata: credential is no longer valid\n\n".utf8)

    static func event(_ name: String, path: Path, data: Node, format: JSONFormat) -> [UInt8] {
        var json: [UInt8] = []
        data.appendJSON(to: &json, format: format)
        return event(name, pathText: path.slashed, dataJSON: json)
    }

    static func event(_ name: String, pathText: String, dataJSON: [UInt8]) -> [UInt8] {
        var bytes = Array("event: \(name)\ndata: {\"path\":".utf8)
        Node(pathText).appendJSON(to: &bytes)
        bytes.append(contentsOf: Array(",\"data\":".utf8))
        bytes.append(contentsOf: dataJSON)
        bytes.append(contentsOf: Array("}\n\n".utf8))
        return bytes
    }

    /// The event a stream at `location` gets for `change`: `put` or `patch` at the stream-relative path
    /// for a write at or below it, a `put` at `/` of its new value for a write above it; nil when the
    /// write is beside it.
    static func event(for change: CommittedChange, at location: Path, exportFormat: Bool) -> [UInt8]? {
        let format: JSONFormat = exportFormat ? .export : .rest
        let root = change.root
        switch change.write {
        case .set(let path):
            if let relative = path.relative(to: location) {
                return event("put", path: relative, data: root.child(at: path), format: format)
            }
            if location.relative(to: path) != nil {
                return event("put", path: .root, data: root.child(at: location), format: format)
            }
            return nil
        case .update(let path, let keys):
            if let relative = path.relative(to: location) {
                var data: [UInt8] = [UInt8(ascii: "{")]
                for (index, key) in keys.enumerated() {
                    if index > 0 { data.append(UInt8(ascii: ",")) }
                    Node(key.description).appendJSON(to: &data)
                    data.append(UInt8(ascii: ":"))
                    root.child(at: path.appending(path: key)).appendJSON(to: &data, format: format)
                }
                data.append(UInt8(ascii: "}"))
                return event("patch", pathText: relative.slashed, dataJSON: data)
            }
            if keys.contains(where: { path.appending(path: $0).overlaps(location) }) {
                return event("put", path: .root, data: root.child(at: location), format: format)
            }
            return nil
        }
    }
}
