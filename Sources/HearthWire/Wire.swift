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
    /// Hearth's own (§2.6.1): the ID HearthClient gives a put or merge, so that one sent again (after a
    /// reconnect, or by the app after a restart) is applied once.
    public static let writeID = "wid"
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
