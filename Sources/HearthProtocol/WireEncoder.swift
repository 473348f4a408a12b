public import HearthCore
public import HearthWire

/// Builds the exact bytes of server messages. JSON types follow §10.1: `r`, `ts`, `t` are integer
/// literals, a listen's `ok` carries an object, every error carries a string, controls always carry `d`.
public enum WireEncoder {
    /// `{"t":"c","d":{"t":"h","d":{"ts":…,"v":"5","h":…,"s":…}}}`
    public static func handshake(timestamp: Int64, host: String, sessionID: String) -> [UInt8] {
        var out = Array(#"{"t":"c","d":{"t":"h","d":{"ts":"#.utf8)
        out += Array(String(timestamp).utf8)
        out += Array(#","v":"5","h":"#.utf8)
        Node(host).appendJSON(to: &out)
        out += Array(#","s":"#.utf8)
        Node(sessionID).appendJSON(to: &out)
        out += Array("}}}".utf8)
        return out
    }

    /// A control message with a string payload, or `null` when `payload` is nil.
    public static func control(_ control: Wire.Control, _ payload: String?) -> [UInt8] {
        var out = Array(#"{"t":"c","d":{"t":"#.utf8)
        Node(control.rawValue).appendJSON(to: &out)
        out += Array(#","d":"#.utf8)
        if let payload { Node(payload).appendJSON(to: &out) } else { out += Array("null".utf8) }
        out += Array("}}".utf8)
        return out
    }

    public static let pong = control(.pong, nil)

    /// `{"t":"d","d":{"r":r,"b":{"s":status,"d":<dataJSON>}}}`
    public static func response(_ request: Int64, _ status: Wire.Status, dataJSON: [UInt8]) -> [UInt8] {
        var out = Array(#"{"t":"d","d":{"r":"#.utf8)
        out += Array(String(request).utf8)
        out += Array(#","b":{"s":"#.utf8)
        Node(status.rawValue).appendJSON(to: &out)
        out += Array(#","d":"#.utf8)
        out += dataJSON
        out += Array("}}}".utf8)
        return out
    }

    /// `ok` with `""` (writes, unlisten, stats, unauth).
    public static func ok(_ request: Int64) -> [UInt8] { response(request, .ok, dataJSON: Array(#""""#.utf8)) }

    /// A listen's `ok`: always an object (Android dereferences it).
    public static func listenOK(_ request: Int64) -> [UInt8] { response(request, .ok, dataJSON: Array("{}".utf8)) }

    /// A listen's `ok` for a query the rules do not index: `{"w":["no_index"]}` (§2.4.1); clients log
    /// which `.indexOn` to add.
    public static func listenOKWithoutIndex(_ request: Int64) -> [UInt8] {
        response(request, .ok, dataJSON: Array(#"{"w":["no_index"]}"#.utf8))
    }

    /// Any non-`ok` status: the data is always a string (Android casts it).
    public static func error(_ request: Int64, _ status: Wire.Status, _ message: String) -> [UInt8] {
        var text: [UInt8] = []
        Node(message).appendJSON(to: &text)
        return response(request, status, dataJSON: text)
    }

    /// A data push `{"t":"d","d":{"a":…,"b":{"p":…,"d":…[,"t":tag]}}}`; `path` has no leading slash.
    public static func push(_ action: Wire.Push, path: Path, dataJSON: [UInt8], tag: Int64? = nil) -> [UInt8] {
        var out = Array(#"{"t":"d","d":{"a":"#.utf8)
        Node(action.rawValue).appendJSON(to: &out)
        out += Array(#","b":{"p":"#.utf8)
        Node(path.description).appendJSON(to: &out)
        out += Array(#","d":"#.utf8)
        out += dataJSON
        if let tag {
            out += Array(#","t":"#.utf8)
            out += Array(String(tag).utf8)
        }
        out += Array("}}}".utf8)
        return out
    }

    /// A set push of `node` in export format (`null` when empty).
    public static func set(path: Path, node: Node, tag: Int64? = nil) -> [UInt8] {
        var json: [UInt8] = []
        node.appendJSON(to: &json, format: .export)
        return push(.set, path: path, dataJSON: json, tag: tag)
    }

    /// An auth-revoked push (§3.4): the connection's token expired; the client reconnects with a fresh one.
    public static let authExpired = Array(#"{"t":"d","d":{"a":"ac","b":{"s":"expired_token","d":"Auth token is expired."}}}"#.utf8)
    /// The credential's account was disabled or deleted, or its password changed: SDKs answer any `ac` by
    /// reconnecting with a freshly refreshed token, which the auth server then refuses, signing the user out.
    public static let authRevoked = Array(
        #"{"t":"d","d":{"a":"ac","b":{"s":"auth_revoked","d":"The account was disabled or deleted, or its password changed: sign in again."}}}"#.utf8)

    /// A listen-revoked push (§3.3): `q` as a one-element array of the client's own query object.
    public static func listenRevoked(path: Path, queryJSON: [UInt8]?) -> [UInt8] {
        var out = Array(#"{"t":"d","d":{"a":"c","b":{"p":"#.utf8)
        Node(path.description).appendJSON(to: &out)
        if let queryJSON {
            out += Array(#","q":["#.utf8)
            out += queryJSON
            out += Array("]".utf8)
        }
        out += Array("}}}".utf8)
        return out
    }
}
