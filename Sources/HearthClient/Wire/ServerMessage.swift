import HearthCore
import HearthWire

/// One message from the server (docs/protocol.md §1.3–§1.6, §3), parsed as the SDKs read it.
enum ServerMessage: Sendable {
    case handshake(timestamp: Int64, host: String, sessionID: String)
    /// `r`: connect to this host instead.
    case reset(host: String)
    /// `s`: the server will not serve this client (never reconnect).
    case shutdown(reason: String)
    case pong
    /// A control message the client has nothing to do for (`e`, `n`, unknown).
    case otherControl
    /// A reply to request `number`: its status and data (raw JSON).
    case response(number: Int64, status: String, data: [UInt8])
    /// `c` listen revoked, `ac` auth revoked, others (ignored).
    case push(action: String, body: [String: [UInt8]])
    /// A `d` push already parsed (the common and large case, see ``parse(_:)``).
    case set(path: Path, data: Node, tag: Int64?)
    /// An `m` push already parsed: each child path and its node (null where a child was removed).
    case merge(path: Path, children: [(Path, Node)], tag: Int64?)

    /// Parses one complete message; nil for anything the client does not recognise (logged, ignored).
    static func parse(_ bytes: [UInt8]) -> ServerMessage? {
        // A set push, as Hearth and Firebase write it (`{"t":"d","d":{"a":"d","b":…}}`), is parsed in one
        // pass into nodes: splitting the envelope first walked a 5 MB snapshot three more times. (Nulls
        // disappear in nodes, which is right for a set; merges keep theirs through the splitter below.)
        if bytes.starts(with: Self.setPushPrefix), let message = try? Node(jsonBytes: bytes) {
            let body = message.child(at: Path("d/b"))
            var tag: Int64?
            if case .integer(let value)? = body.child("t").leafValue { tag = value }
            return .set(path: Path(body.child("p").stringValue ?? ""), data: body.child("d"), tag: tag)
        }
        guard let envelope = WireFields.of(bytes), let kind = envelope[Wire.type].flatMap(JSONPlainScalar.string),
            let data = envelope[Wire.data]
        else { return nil }
        if kind == Wire.Kind.control.rawValue {
            guard let control = WireFields.of(data), let type = control[Wire.type].flatMap(JSONPlainScalar.string) else { return nil }
            let payload = control[Wire.data] ?? Array("null".utf8)
            switch Wire.Control(rawValue: type) {
            case .handshake?:
                guard let handshake = WireFields.of(payload), let ts = handshake["ts"].flatMap(WireFields.integer) else { return nil }
                let host = handshake["h"].flatMap(JSONPlainScalar.string) ?? ""
                let session = handshake["s"].flatMap(JSONPlainScalar.string) ?? ""
                return .handshake(timestamp: ts, host: host, sessionID: session)
            case .reset?:
                return .reset(host: JSONPlainScalar.string(payload) ?? "")
            case .shutdown?:
                return .shutdown(reason: JSONPlainScalar.string(payload) ?? "the server shut the connection down")
            case .pong?:
                return .pong
            default:
                return .otherControl
            }
        }
        guard kind == Wire.Kind.data.rawValue, let message = WireFields.of(data) else { return nil }
        if let numberJSON = message[Wire.requestNumber] {
            guard let number = WireFields.integer(numberJSON), let body = message[Wire.body].flatMap(WireFields.of) else { return nil }
            let status = body[Wire.status].flatMap(JSONPlainScalar.string) ?? "failure"
            return .response(number: number, status: status, data: body[Wire.data] ?? Array("null".utf8))
        }
        guard let action = message[Wire.action].flatMap(JSONPlainScalar.string),
            let body = message[Wire.body].flatMap(WireFields.of)
        else { return nil }
        if action == Wire.Push.merge.rawValue || action == Wire.Push.set.rawValue {
            return dataPush(merge: action == Wire.Push.merge.rawValue, body)
        }
        return .push(action: action, body: body)
    }

    /// A `d` the fast path above did not take (another key order), or an `m`; nil if its data is not JSON.
    private static func dataPush(merge: Bool, _ body: [String: [UInt8]]) -> ServerMessage? {
        let path = Path(body[Wire.path].flatMap(JSONPlainScalar.string) ?? "")
        let tag = body[Wire.tag].flatMap(WireFields.integer)
        guard let raw = body[Wire.data] else { return nil }
        guard merge else { return (try? Node(jsonBytes: raw)).map { .set(path: path, data: $0, tag: tag) } }
        guard let entries = JSONObjectSplitter.split(raw) else { return nil }
        var children: [(Path, Node)] = []
        for (key, value) in entries {
            guard let node = try? Node(jsonBytes: Array(value)) else { return nil }
            children.append((Path(key), node))
        }
        return .merge(path: path, children: children, tag: tag)
    }

    private static let setPushPrefix = Array(#"{"t":"d","d":{"a":"d","b":"#.utf8)
}
