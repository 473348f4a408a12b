import HearthProtocol

/// How the transport treats HTTP/1.1 pipelining: requests sent before the previous answer arrived.
///
/// Pipelined requests are answered in order until one with a body comes out of lws's buffer; that one
/// ends the connection unanswered, and RFC 9112 §9.3.2 has clients retry on a new connection. No client
/// Hearth serves pipelines (browsers, the Firebase SDKs, firebase-admin and curl all wait).
///
/// Why not serve them: libwebsockets 4.1 (Debian's, and its master as of 2026) reads a pipelined request
/// out of its own buffer with the wrong offset. When a request with a body follows another in the same
/// read, `lws_http_action` hands the *start of that request* (its request line) to
/// `LWS_CALLBACK_HTTP_BODY` as the body, and if the transaction then completes inside that callback its
/// consume loop never ends: the loop thread spins and every client of the server waits (measured: one
/// socket write of three PUTs and a GET stopped the server). Pipelined bodyless requests (GETs) after a
/// request answered at once do parse correctly and are served.
enum PipelinedRequests {
    /// The callback result that makes lws close the connection without running the request.
    static let refuse: Int32 = -1

    /// Passes lws may make over buffered bytes after a complete body within one loop iteration before the
    /// transport takes it for lws_http_action's endless loop. Its buffer service makes one to three
    /// (measured with HEARTH_LWS_LOG=31); the endless loop reaches any number within microseconds.
    static let bufferPassesPerIterationMax = 64

    /// True when the first bytes handed over as a body are the start of the request's own request line
    /// (`PUT /…`, or as much of it as the body is long): lws's misread above. No body Hearth accepts starts
    /// that way: JSON cannot start with an upper-case letter, and form bodies start with a lower-case field
    /// name. (Not every misread is caught so, when a request's headers were split over two reads; the
    /// transport never completes a transaction inside a body callback, so those end the connection too.)
    static func isMisreadBody(_ bytes: UnsafeRawBufferPointer, method: HTTPRequest.Method) -> Bool {
        let requestLine = Array(method.rawValue.utf8) + [UInt8(ascii: " "), UInt8(ascii: "/")]
        return !bytes.isEmpty && zip(bytes, requestLine).allSatisfy { $0 == $1 }
    }
}
