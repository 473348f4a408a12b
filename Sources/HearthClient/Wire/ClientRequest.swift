import HearthCore
import HearthWire

/// The requests the client sends (docs/protocol.md §2), encoded as the official SDKs encode them:
/// `{"t":"d","d":{"r":<number>,"a":<action>,"b":<body>}}`. Keys and actions come from ``Wire``.
enum ClientRequest: Sendable {
    case stats([String: Int])
    case auth(credential: String)
    case unauth
    case listen(path: Path, query: WireQuery?, tag: Int64?, hash: String)
    case unlisten(path: Path, query: WireQuery?, tag: Int64?)
    /// `hash` makes it a compare-and-set (transactions, §2.6). `writeID` (§2.6.1) makes sending it
    /// again safe: the server applies it once.
    case put(path: Path, data: Node, hash: String?, writeID: String?)
    case merge(path: Path, data: [(Path, Node)], writeID: String?)
    case onDisconnectPut(path: Path, data: Node)
    case onDisconnectMerge(path: Path, data: [(Path, Node)])
    case onDisconnectCancel(path: Path)
    case get(path: Path, query: WireQuery?)

    var action: Wire.Action {
        switch self {
        case .stats: .stats
        case .auth: .auth
        case .unauth: .unauth
        case .listen: .listen
        case .unlisten: .unlisten
        case .put: .put
        case .merge: .merge
        case .onDisconnectPut: .onDisconnectPut
        case .onDisconnectMerge: .onDisconnectMerge
        case .onDisconnectCancel: .onDisconnectCancel
        case .get: .get
        }
    }

    /// The whole message with request number `number`.
    func encoded(number: Int64) -> [UInt8] {
        var out = Array(#"{"t":"d","d":{"r":"#.utf8)
        out += Array(String(number).utf8)
        out += Array(#","a":"#.utf8)
        Node(action.rawValue).appendJSON(to: &out)
        out += Array(#","b":"#.utf8)
        appendBody(to: &out)
        out += Array("}}".utf8)
        return out
    }

    private func appendBody(to out: inout [UInt8]) {
        var body = JSONObjectWriter()
        switch self {
        case .stats(let counters):
            var inner: [UInt8] = [UInt8(ascii: "{")]
            for (index, (key, value)) in counters.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { inner.append(UInt8(ascii: ",")) }
                Node(key).appendJSON(to: &inner)
                inner += Array(":\(value)".utf8)
            }
            inner.append(UInt8(ascii: "}"))
            body.raw("c", inner)
        case .auth(let credential):
            body.string(Wire.credential, credential)
        case .unauth:
            break
        case .listen(let path, let query, let tag, let hash):
            body.string(Wire.path, path.slashed)
            if let query { body.raw(Wire.query, query.json) }
            if let tag { body.raw(Wire.tag, Array(String(tag).utf8)) }
            body.string(Wire.hash, hash)
        case .unlisten(let path, let query, let tag):
            body.string(Wire.path, path.slashed)
            if let query { body.raw(Wire.query, query.json) }
            if let tag { body.raw(Wire.tag, Array(String(tag).utf8)) }
        case .put(let path, let data, let hash, let writeID):
            body.string(Wire.path, path.slashed)
            body.node(Wire.data, data)
            if let hash { body.string(Wire.hash, hash) }
            if let writeID { body.string(Wire.writeID, writeID) }
        case .merge(let path, let data, let writeID):
            body.string(Wire.path, path.slashed)
            body.raw(Wire.data, Self.mergeJSON(data))
            if let writeID { body.string(Wire.writeID, writeID) }
        case .onDisconnectMerge(let path, let data):
            body.string(Wire.path, path.slashed)
            body.raw(Wire.data, Self.mergeJSON(data))
        case .onDisconnectPut(let path, let data):
            body.string(Wire.path, path.slashed)
            body.node(Wire.data, data)
        case .onDisconnectCancel(let path):
            body.string(Wire.path, path.slashed)
        case .get(let path, let query):
            body.string(Wire.path, path.slashed)
            if let query { body.raw(Wire.query, query.json) }
        }
        out += body.finished()
    }

    /// `{"<relative path>": <value in export form>, …}`; `null` deletes.
    static func mergeJSON(_ data: [(Path, Node)]) -> [UInt8] {
        var writer = JSONObjectWriter()
        for (path, value) in data { writer.node(path.description, value) }
        return writer.finished()
    }
}

/// A JSON object written key by key.
struct JSONObjectWriter {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]

    mutating func raw(_ key: String, _ json: [UInt8]) {
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        Node(key).appendJSON(to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        bytes += json
    }

    mutating func string(_ key: String, _ value: String) {
        var json: [UInt8] = []
        Node(value).appendJSON(to: &json)
        raw(key, json)
    }

    /// A node in export form (priorities kept), `null` when empty.
    mutating func node(_ key: String, _ value: Node) {
        var json: [UInt8] = []
        value.appendJSON(to: &json, format: .export)
        raw(key, json)
    }

    mutating func finished() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}
