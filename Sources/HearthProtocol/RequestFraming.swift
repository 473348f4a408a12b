/// How a request's body is delimited, decided from its head as RFC 9112 §6 says, or why the request
/// is refused before its body is read. Pure, so the transport's choice is unit-tested and fuzzed.
///
/// Refusals close the connection: after a head whose body length is in doubt, nothing that follows on
/// the connection can be trusted to start a new request (that doubt is what request smuggling behind
/// a proxy feeds on, RFC 9112 §6.3 item 3).
///
///     RequestFraming.decide(method: .put, contentLength: "12", transferEncoding: nil)   // .contentLength(12)
///     RequestFraming.decide(method: .put, contentLength: "12", transferEncoding: "chunked")   // refused, 400
public enum RequestFraming: Equatable, Sendable {
    /// No body, and the connection may carry another request.
    case none
    /// Exactly this many bytes follow.
    case contentLength(Int)
    /// `Transfer-Encoding: chunked`: decoded by ``ChunkedBodyDecoder``; the connection closes after the
    /// answer (the transport underneath cannot find where the next request starts).
    case chunked
    /// A POST, PUT or PATCH with neither header: an empty body, and the connection closes after the
    /// answer, since a client that sends such a request may be sending a body anyway.
    case emptyThenClose

    /// Why a head was refused: a status and a message for the client.
    public struct Refusal: Error, Equatable, Sendable {
        public let status: Int
        public let message: String
    }

    public static func decide(
        method: HTTPRequest.Method, contentLength: String?, transferEncoding: String?
    ) -> Result<RequestFraming, Refusal> {
        let carriesBody = method == .post || method == .put || method == .patch
        if let encoding = transferEncoding {
            // RFC 9112 §6.3 item 3: both headers is a smuggling attempt or a broken client; refuse and close.
            guard contentLength == nil else {
                return .failure(Refusal(status: 400, message: "A request may not have both Content-Length and Transfer-Encoding"))
            }
            guard encoding.trimmingSpaces.lowercased() == "chunked" else {
                return .failure(Refusal(status: 501, message: "Transfer-Encoding '\(encoding.prefix(40))' is not supported; send chunked or Content-Length"))
            }
            guard carriesBody else {
                return .failure(Refusal(status: 400, message: "A \(method.rawValue) request has no body to chunk"))
            }
            return .success(.chunked)
        }
        if let contentLength {
            // RFC 9110 §8.6: one decimal number; a list or a sign is as bad as a second header.
            guard !contentLength.isEmpty, contentLength.utf8.count <= 18,
                contentLength.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let length = Int(contentLength)
            else {
                return .failure(Refusal(status: 400, message: "Content-Length must be one decimal number"))
            }
            return .success(length > 0 ? .contentLength(length) : .none)
        }
        return .success(carriesBody ? .emptyThenClose : .none)
    }
}

extension String {
    /// Without leading and trailing spaces and tabs (header values' optional whitespace, RFC 9110 §5.5).
    fileprivate var trimmingSpaces: Substring {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
