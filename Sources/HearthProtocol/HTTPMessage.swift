/// The HTTP model Hearth's services answer and its transport carries: no sockets, no C. HearthServer's
/// database endpoints and HearthAuth's endpoints take the same request and give the same response.

/// One HTTP request, complete with its body.
public struct HTTPRequest: Sendable {
    public enum Method: String, Sendable, CaseIterable {
        case get = "GET", put = "PUT", post = "POST", patch = "PATCH", delete = "DELETE", options = "OPTIONS", head = "HEAD"
    }

    public var method: Method
    /// The path, percent-decoded (`/users/ada.json`).
    public var path: String
    /// The query parameters in order, names and values percent-decoded.
    public var queryItems: [(name: String, value: String)]
    /// Header values by lower-case name. Only the headers HearthServer reads are carried (see ``HTTPRequest/headerNames``).
    public var headers: [String: String]
    public var body: [UInt8]
    /// The peer's IP address, when the transport reports it (auth's per-IP rate limits use it).
    public var remoteAddress: String?

    public init(
        method: Method, path: String, queryItems: [(name: String, value: String)] = [], headers: [String: String] = [:],
        body: [UInt8] = [], remoteAddress: String? = nil
    ) {
        self.method = method
        self.path = path
        self.queryItems = queryItems
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// The request headers the server reads; transports need copy no others.
    public static let headerNames: [String] = [
        "host", "authorization", "accept", "content-type", "content-length", "if-match", "if-none-match",
        "x-firebase-etag", "x-http-method-override", "origin", "access-control-request-headers",
        "access-control-request-method", "last-event-id", "x-goog-api-key", "x-forwarded-for", "x-forwarded-proto",
        // The console's session (docs/console.md): its cookie and the CSRF token its pages send.
        "cookie", "x-hearth-csrf",
    ]
}

/// A complete response.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    /// Headers in the order they are sent; names lower-case.
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body
            && lhs.headers.map { "\($0.0): \($0.1)" } == rhs.headers.map { "\($0.0): \($0.1)" }
    }

    public func header(_ name: String) -> String? { headers.first { $0.0 == name }?.1 }

    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
