import HearthCore
import HearthProtocol
import HearthStorage

extension RESTError {
    /// A write's failure as REST states it (a stale compare-and-set is answered with the current value
    /// by the REST handler instead, §6.5).
    init(_ failure: WriteFailure) {
        switch failure {
        case .invalid(let message): self.init(400, message)
        case .permissionDenied: self = .permissionDenied
        case .stale: self.init(412, failure.message)
        case .storage(let message): self.init(500, message)
        }
    }

    init(_ unavailable: NamespaceUnavailable) {
        switch unavailable.reason {
        case .invalidName: self.init(400, unavailable.message)
        case .notFound: self.init(404, unavailable.message)
        case .cannotOpen: self.init(500, unavailable.message)
        }
    }

    init(_ refusal: CredentialRefusal) {
        self.init(401, refusal.message)
    }
}

/// The shapes of REST answers: Firebase's JSON and error bodies, and the headers on every response.
enum RESTResponses {
    /// Sent on every response: browsers call the REST API cross-origin (§6.1), and JSON must never be
    /// sniffed as HTML. (Strict-Transport-Security is the transport's to add, over TLS only.)
    static let commonHeaders: [(String, String)] = [
        ("access-control-allow-origin", "*"),
        ("x-content-type-options", "nosniff"),
        ("cache-control", "no-cache"),
    ]

    static func withCommonHeaders(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers += commonHeaders.filter { name, _ in !response.headers.contains { $0.0 == name } }
        return response
    }

    static func json(_ status: Int, _ body: [UInt8], headers: [(String, String)] = []) -> HTTPResponse {
        withCommonHeaders(HTTPResponse(
            status: status, headers: [("content-type", "application/json; charset=utf-8")] + headers, body: body))
    }

    /// `{"error": message}` with the status the error stands for.
    static func error(_ error: any Error) -> HTTPResponse {
        let rest: RESTError
        switch error {
        case let error as RESTError: rest = error
        case let failure as WriteFailure: rest = RESTError(failure)
        case let unavailable as NamespaceUnavailable: rest = RESTError(unavailable)
        case let refusal as CredentialRefusal: rest = RESTError(refusal)
        case let error as DataError: rest = RESTError(400, error.message)
        case let error as StorageError: rest = RESTError(500, error.message)
        default: rest = RESTError(500, "Internal error")
        }
        var response = json(rest.status, Array("{\"error\":\(Node(rest.message).json())}".utf8))
        if rest.closesConnection { response.headers.append(("connection", "close")) }
        return response
    }

    static func preflight(_ request: HTTPRequest) -> HTTPResponse {
        let allowHeaders = request.headers["access-control-request-headers"]
            ?? "authorization, content-type, x-firebase-etag, if-match, if-none-match, x-http-method-override"
        return HTTPResponse(status: 204, headers: commonHeaders + [
            ("access-control-allow-methods", "GET, PUT, POST, PATCH, DELETE, OPTIONS"),
            ("access-control-allow-headers", allowHeaders),
            ("access-control-max-age", "86400"),
        ])
    }

    static func script(_ text: String) -> HTTPResponse {
        withCommonHeaders(HTTPResponse(
            status: 200, headers: [("content-type", "application/javascript; charset=utf-8")], body: Array(text.utf8)))
    }

    static func format(_ target: RESTTarget) -> JSONFormat {
        let base: JSONFormat = target.exportFormat ? .export : .rest
        return target.print == .pretty ? .pretty(base) : base
    }

    static func etag(of node: Node) -> String { node.isEmpty ? "null_etag" : node.hash }

    static func wantsETag(_ request: HTTPRequest) -> Bool {
        request.headers["x-firebase-etag"]?.lowercased() == "true" || request.headers["if-match"] != nil
            || request.headers["if-none-match"] != nil
    }
}
