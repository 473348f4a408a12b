public import HearthCore

/// Every key and action of Firebase's realtime wire protocol v5 (docs/protocol.md §1–§3), defined once.
///
/// An envelope is `{"t":"c"|"d","d":…}`. Control messages carry `{"t":<control>,"d":…}`; data
/// messages are requests `{"r":<int>,"a":<action>,"b":<body>}`, responses `{"r":<int>,"b":{"s":…,"d":…}}`
/// and pushes `{"a":<action>,"b":<body>}`.
public enum Wire {
    /// Envelope keys.
    public static let type = "t"
    public static let data = "d"
    /// Data-message keys.
    public static let requestNumber = "r"
    public static let action = "a"
    public static let body = "b"
    /// Response body keys.
    public static let status = "s"
    /// Request/push body keys.
    public static let path = "p"
    public static let hash = "h"
    public static let query = "q"
    public static let tag = "t"
    public static let credential = "cred"
    public static let authVariable = "authvar"
    public static let noAuth = "noauth"
    /// Connection URL query parameters (§1.1): namespace, last session id, long-poll session to upgrade.
    public static let namespaceParameter = "ns"
    public static let lastSessionParameter = "ls"
    public static let transportSessionParameter = "s"

    /// Envelope types.
    public enum Kind: String, Sendable {
        case control = "c"
        case data = "d"
    }

    /// Control message types (§1.5), both directions.
    public enum Control: String, Sendable {
        case handshake = "h"
        case ping = "p"
        case pong = "o"
        case reset = "r"
        case shutdown = "s"
        case error = "e"
        case endOfTransmission = "n"
    }

    /// Client request actions (§2.10).
    public enum Action: String, Sendable, CaseIterable {
        case stats = "s"
        case auth = "auth"
        case gauth = "gauth"
        case unauth = "unauth"
        case appCheck = "appcheck"
        case unAppCheckJS = "unappeck"
        case unAppCheck = "unappcheck"
        case listen = "q"
        case listenLegacy = "l"
        case unlisten = "n"
        case unlistenLegacy = "u"
        case put = "p"
        case merge = "m"
        case onDisconnectPut = "o"
        case onDisconnectMerge = "om"
        case onDisconnectCancel = "oc"
        case get = "g"
    }

    /// Server push actions (§3).
    public enum Push: String, Sendable {
        case set = "d"
        case merge = "m"
        case listenRevoked = "c"
        case authRevoked = "ac"
    }

    /// Response statuses (§2.1).
    public enum Status: String, Sendable {
        case ok
        case permissionDenied = "permission_denied"
        case dataStale = "datastale"
        case invalidToken = "invalid_token"
        case expiredToken = "expired_token"
        /// Hearth's own: the token's account was disabled or deleted, or its password changed (an `ac` push).
        case authRevoked = "auth_revoked"
        case tooBig = "too_big"
        case failure
    }

    /// Protocol version (`v=5`).
    public static let version = "5"
    /// Messages longer than this many UTF-8 bytes are split into count-prefixed frames (§1.8; Firebase
    /// counts characters, and a byte count is never more lenient). Segments grow past it only to keep
    /// the count within four digits.
    public static let frameCharactersMax = 16384
}

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
