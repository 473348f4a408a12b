import HearthProtocol
internal import CLibWebSockets
import Foundation
import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

/// One HTTP connection: its request being read and its response being written. Loop thread only.
final class HTTPConnection: HTTPResponder {
    private enum Phase {
        case idle
        case readingBody
        case handling
        case responding(complete: Bool)
        case streaming
        /// The last answer is handed to lws; the connection ends without reading another request.
        case closing
    }

    let wsi: OpaquePointer
    unowned let transport: HTTPServerTransport
    private var phase = Phase.idle
    private var request = HTTPRequest(method: .get, path: "/")
    /// What this request's body holds of the transport's ``RequestBodyBudget``, given back once answered.
    private var reservedBodyBytes = 0
    /// The decoder of a `Transfer-Encoding: chunked` body being read.
    private var chunkedBody: ChunkedBodyDecoder?
    private var head: (status: Int, headers: [(String, String)], contentLength: Int?)?
    private var outbound: [UInt8] = []
    private var outboundStart = 0
    private var closeWhenWritten = false
    private var streamEnded = false
    private var isClosed = false
    var onClose: (() -> Void)?

    private var budget: OutboundBudget

    init(wsi: OpaquePointer, transport: HTTPServerTransport) {
        self.wsi = wsi
        self.transport = transport
        budget = OutboundBudget(limitBytes: transport.configuration.outboundBufferBytesMax)
    }

    var queuedByteCount: Int { outbound.count - outboundStart }

    func beginRequest(uri: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        // A request while the previous one is unanswered can only come from bytes the client sent
        // ahead (pipelining): lws parsed them out of its buffer. Hearth answers one request at a time
        // per connection, so this connection ends here (see ``PipelinedRequests``).
        guard case .idle = phase else { return PipelinedRequests.refuse }
        var uriPointer: UnsafeMutablePointer<CChar>?
        var uriLength: Int32 = 0
        let methodIndex = lws_http_get_uri_and_method(wsi, &uriPointer, &uriLength)
        let method: HTTPRequest.Method
        switch Int(methodIndex) {
        case LWSHUMETH_GET: method = .get
        case LWSHUMETH_POST: method = .post
        case LWSHUMETH_PUT: method = .put
        case LWSHUMETH_PATCH: method = .patch
        case LWSHUMETH_DELETE: method = .delete
        case LWSHUMETH_OPTIONS: method = .options
        case LWSHUMETH_HEAD: method = .head
        default: return -1
        }
        request = HTTPRequest(method: method, path: "/")
        chunkedBody = nil
        head = nil
        outbound = []
        outboundStart = 0
        let target = uri.map { UnsafeRawBufferPointer(start: $0, count: length) } ?? UnsafeRawBufferPointer(start: nil, count: 0)
        if let (status, message) = RequestHead.sizeRefusal(wsi) { return refuse(status: status, message: message) }
        // lws decodes `%XX` in the path: a NUL (which lws lets through right after a `/`) or bytes that
        // are not UTF-8 would otherwise reach the handler as a different path than the client meant.
        guard !target.contains(0) else { return refuse(status: 400, message: "The request path contains a NUL byte (%00)") }
        guard let path = target.isEmpty ? "/" : String(validating: target, as: UTF8.self) else {
            return refuse(status: 400, message: "The request path is not valid UTF-8 once percent-decoded")
        }
        request.path = path
        if transport.handler.needsPeerAddress(path: path) { request.remoteAddress = peerAddress() }
        guard let items = queryItems() else {
            return refuse(status: 400, message: "A query parameter is not valid UTF-8 once percent-decoded")
        }
        request.queryItems = items
        request.headers.reserveCapacity(8)  // grown one insert at a time it rehashed several times
        for (name, token) in Self.headerTokens {
            if let value = header(name, token: token) { request.headers[name] = value }
        }
        // lws closes after answering a request that says `Connection: close`; the answer must say so too
        // (RFC 9112 §9.6), or a proxy that keeps upstream connections (nginx `keepalive`) sends its next
        // request into the closing connection and answers its client 502.
        if let connection = header("connection", token: WSI_TOKEN_CONNECTION),
            connection.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces).lowercased() == "close" })
        {
            closeWhenWritten = true
        }
        let transferEncoding = header("transfer-encoding", token: WSI_TOKEN_HTTP_TRANSFER_ENCODING)
        switch RequestFraming.decide(
            method: method, contentLength: request.headers["content-length"], transferEncoding: transferEncoding)
        {
        case .failure(let refusal):
            return refuse(status: refusal.status, message: refusal.message)
        case .success(.none):
            break
        case .success(.contentLength(let declared)):
            phase = .readingBody
            if declared > transport.configuration.requestBodyBytesMax {
                rejectOversizeBody()
            } else if let refusal = reserveBody(declared) {
                return refusal
            }
            return callbackResult
        case .success(.chunked):
            // lws reads no chunked framing itself (it expects a body of 100 MiB and then discards the
            // rest): the body is decoded here, and the connection ends after the answer.
            chunkedBody = ChunkedBodyDecoder(bodyBytesMax: transport.configuration.requestBodyBytesMax)
            closeWhenWritten = true
            phase = .readingBody
            return callbackResult
        case .success(.emptyThenClose):
            // lws assumes such a request has a body it will skip; the connection cannot carry another.
            closeWhenWritten = true
        }
        dispatch()
        return callbackResult
    }

    /// Answers a request refused before the handler sees it, in the handler's error shape, and
    /// closes the connection (nothing after a refused head can be trusted to start a request).
    func refuse(status: Int, message: String, headers: [(String, String)] = []) -> Int32 {
        closeWhenWritten = true
        phase = .handling
        var response = transport.handler.refusal(status: status, message: message)
        response.headers += headers
        respond(response)
        return callbackResult
    }

    /// Takes `bytes` more of the transport's body budget for this request, or refuses the request (413
    /// when it could never fit, 503 while others' bodies hold the budget) and returns the callback's result.
    private func reserveBody(_ bytes: Int) -> Int32? {
        switch transport.bodyBudget.reserve(bytes) {
        case .granted:
            reservedBodyBytes += bytes
            return nil
        case .tooLarge(let bytesMax):
            return refuse(status: 413, message: "Request body is larger than this server takes at once under its memory limit (\(bytesMax) bytes of request bodies; docs/reliability.md). Write it in smaller parts, or give the server more memory.")
        case .busy(let inFlight, let bytesMax):
            return refuse(status: 503, message: "The server is busy with other large requests (\(inFlight) of the \(bytesMax) bytes of request bodies its memory limit allows at once). Nothing was written: retry in a moment.", headers: [("retry-after", "1")])
        }
    }

    /// Gives this request's share of the body budget back (its answer is written, or the connection is gone).
    private func releaseBody() {
        guard reservedBodyBytes > 0 else { return }
        transport.bodyBudget.release(reservedBodyBytes)
        reservedBodyBytes = 0
    }

    private func rejectOversizeBody() {
        closeWhenWritten = true
        let limit = transport.configuration.requestBodyBytesMax
        respond(transport.handler.refusal(status: 413, message: "Request body is larger than the limit of \(limit) bytes"))
    }

    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard case .readingBody = phase else { return 0 }
        if chunkedBody != nil { return receiveChunks(bytes) }
        if request.body.isEmpty, PipelinedRequests.isMisreadBody(bytes, method: request.method) {
            return PipelinedRequests.refuse
        }
        if request.body.count + bytes.count > transport.configuration.requestBodyBytesMax {
            rejectOversizeBody()
            return callbackResult
        }
        request.body.append(contentsOf: bytes)
        return 0
    }

    /// The bytes of a chunked body; the request is handled once its last chunk is read (lws, which
    /// expects 100 MiB, never reports the body complete). Bytes after it are a pipelined request,
    /// which this connection, closing after the answer, does not serve.
    private func receiveChunks(_ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard var decoder = chunkedBody else { return 0 }
        // Its length is not known ahead: reserved as it comes (framing included, a little more than the body).
        if let refusal = reserveBody(bytes.count) {
            chunkedBody = nil
            return refusal
        }
        let state: ChunkedBodyDecoder.State
        do { state = try decoder.receive(bytes) } catch {
            chunkedBody = nil
            return refuse(status: error.status, message: error.message)
        }
        chunkedBody = decoder
        guard case .complete = state else { return 0 }
        request.body = decoder.body
        chunkedBody = nil
        inBodyCallback = true
        defer { inBodyCallback = false }
        dispatch()
        return callbackResult
    }

    /// True while a body callback runs: an answer given then is written at once but its transaction
    /// completes from the writable callback, never inside the body callback (where lws, serving a
    /// pipelined request, would loop forever on its buffer).
    private var inBodyCallback = false
    /// Repeated body-completion callbacks in loop iteration `repeatedCompletionIteration`.
    private var repeatedCompletions = 0
    private var repeatedCompletionIteration: UInt64 = 0
    private var completionDeferred = false

    private func finishTransactionAfterWrite() {
        if inBodyCallback {
            completionDeferred = true
            lws_callback_on_writable(wsi)
            return
        }
        if completeTransaction() != 0 { endConnection() }
    }

    func bodyComplete() -> Int32 {
        guard case .readingBody = phase else {
            // lws calls this again for every pass over bytes buffered after a complete body: the client
            // pipelined behind a request with a body. Passes from lws's service of its buffer come a
            // few per loop iteration: wait for the answer (`lws_rx_flow_control` does not stop them and
            // stops the writable callback too); then lws reads the next request. When this request
            // itself came out of the buffer, the passes come from lws_http_action's loop over it, which
            // repeats forever within one iteration: end the connection, unanswered (see
            // ``PipelinedRequests``).
            if repeatedCompletionIteration != transport.loopIteration {
                repeatedCompletionIteration = transport.loopIteration
                repeatedCompletions = 0
            }
            repeatedCompletions += 1
            if repeatedCompletions > PipelinedRequests.bufferPassesPerIterationMax { return PipelinedRequests.refuse }
            return callbackResult
        }
        inBodyCallback = true
        defer { inBodyCallback = false }
        dispatch()
        return callbackResult
    }

    private func dispatch() {
        phase = .handling
        transport.handler.handle(request, responder: self)
    }

    /// Nil when a name or value is not UTF-8 once decoded.
    private func queryItems() -> [(name: String, value: String)]? {
        Self.queryItems(wsi, scratch: transport.headerScratch)
    }

    /// The client's IP address as text.
    private func peerAddress() -> String? {
        let scratch = transport.headerScratch
        guard lws_get_peer_simple(wsi, scratch.baseAddress, Int(scratch.count)) != nil else { return nil }
        let text = String(cString: scratch.baseAddress!)
        return text.isEmpty ? nil : text
    }


    // MARK: HTTPResponder

    func respond(_ response: HTTPResponse) {
        guard !isClosed, head == nil, !headSent else { return }
        var response = response
        if closeWhenWritten, !response.headers.contains(where: { $0.0 == "connection" }) {
            response.headers.append(("connection", "close"))
        }
        // The length is the transport's to write, once: from the body (a handler's own would repeat it).
        response.headers.removeAll { $0.0 == "content-length" }
        response.headers += transport.responseHeaders
        if request.method == .head {
            // The GET's head, without its body (RFC 9110 §9.3.2): its length says what a GET would carry.
            response.headers.append(("content-length", String(response.body.count)))
            response.body = []
            if !inBodyCallback, respondDirectly(response, contentLength: nil) { return }
            head = (response.status, response.headers, nil)
            outbound = []
            outboundStart = 0
            phase = .responding(complete: true)
            lws_callback_on_writable(wsi)
            return
        }
        // Not from inside a body callback: the client, having its answer, may send its next request
        // before the transaction completes (from the writable callback, see finishTransactionAfterWrite),
        // and lws would take those bytes for more of this body and drop them, leaving the client's
        // keep-alive connection to be closed under it (1–3% of synchronous answers to bodies, measured).
        // Answered from the writable callback, the transaction completes before the client hears back.
        if !inBodyCallback, respondDirectly(response) { return }
        head = (response.status, response.headers, response.body.count)
        outbound = response.body
        outboundStart = 0
        phase = .responding(complete: true)
        lws_callback_on_writable(wsi)
    }

    /// Writes a small complete response now, head and body in one write, instead of asking lws for a
    /// writable callback first: that round trip cost four epoll_ctl calls, an epoll_wait and a second
    /// send per request. lws keeps whatever the socket does not take and finishes it itself (and
    /// defers the end of the transaction until then). Returns false, having written nothing, when the
    /// response is too large for one staged write; then the writable path sends it.
    private func respondDirectly(_ response: HTTPResponse) -> Bool {
        respondDirectly(response, contentLength: response.body.count)
    }

    /// As above; `contentLength` nil leaves the length to a header of the response's own (a HEAD's).
    private func respondDirectly(_ response: HTTPResponse, contentLength: Int?) -> Bool {
        let pre = CHearthLWS_pre()
        let raw = transport.writeScratch
        guard response.body.count <= raw.count - pre - 8192 else { return false }
        let start = raw.baseAddress! + pre
        let headEnd = start + 8192
        var cursor: UnsafeMutablePointer<UInt8>? = start
        let contentType = response.headers.first { $0.0 == "content-type" }?.1
        let length = contentLength.map { lws_filepos_t($0) } ?? CHearthLWS_noContentLength()
        if lws_add_http_common_headers(wsi, UInt32(response.status), contentType, length, &cursor, headEnd) != 0 {
            return false
        }
        for (name, value) in response.headers where name != "content-type" {
            if !Self.appendHeader(name, value, at: &cursor, end: headEnd) { return false }
        }
        if lws_finalize_http_header(wsi, &cursor, headEnd) != 0 { return false }
        guard var end = cursor else { return false }
        response.body.withUnsafeBufferPointer { body in
            if let base = body.baseAddress { end.update(from: base, count: body.count) }
        }
        end += response.body.count
        let total = end - start
        phase = .responding(complete: true)
        if lws_write(wsi, start, total, LWS_WRITE_HTTP_HEADERS) < 0 {
            endConnection()
            return true
        }
        finishTransactionAfterWrite()
        return true
    }

    /// `name: value\r\n` at `cursor`, as lws_add_http_header_by_name writes it for HTTP/1 (the only
    /// version served), without building `name + ":"` as a new String for each header.
    private static func appendHeader(
        _ name: String, _ value: String, at cursor: inout UnsafeMutablePointer<UInt8>?, end: UnsafeMutablePointer<UInt8>
    ) -> Bool {
        guard var out = cursor, end - out >= name.utf8.count + value.utf8.count + 4 else { return false }
        copyUTF8(name, to: &out)
        out[0] = UInt8(ascii: ":")
        out[1] = UInt8(ascii: " ")
        out += 2
        copyUTF8(value, to: &out)
        out[0] = 13
        out[1] = 10
        cursor = out + 2
        return true
    }

    /// `text`'s UTF-8 bytes at `out`, one copy (a byte-by-byte loop over `utf8` cost ~4k instructions
    /// per response's headers, measured with callgrind).
    private static func copyUTF8(_ text: String, to out: inout UnsafeMutablePointer<UInt8>) {
        var text = text
        let count = text.withUTF8 { bytes in
            if let base = bytes.baseAddress { out.update(from: base, count: bytes.count) }
            return bytes.count
        }
        out += count
    }

    func startStream(status: Int, headers: [(String, String)]) {
        guard !isClosed, head == nil, !headSent else { return }
        head = (status, headers + transport.responseHeaders + [("transfer-encoding", "chunked")], nil)
        phase = .streaming
        lws_callback_on_writable(wsi)
    }

    func send(_ bytes: [UInt8]) -> Bool {
        guard !isClosed, !streamEnded else { return false }
        if budget.isOver(queuedBytes: queuedByteCount) { return false }
        budget.willQueue(messageBytes: bytes.count, queuedBytes: queuedByteCount)
        appendChunk(bytes)
        return true
    }

    func abort() {
        guard !isClosed else { return }
        onClose = nil
        streamEnded = true
        head = nil
        outbound = []
        outboundStart = 0
        phase = .closing
        // Not from inside this connection's own callback (lws would use the freed wsi on return):
        // then the kill happens on lws's next pass, and the writable callback, if it comes, ends it.
        if transport.callbackWSI == wsi {
            lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
            lws_callback_on_writable(wsi)
            return
        }
        // A stalled reader never makes the socket writable again: closed now, whatever lws still holds.
        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_SYNC)
    }

    func sendFinal(_ bytes: [UInt8]) {
        guard !isClosed, !streamEnded else { return }
        appendChunk(bytes)
    }

    private func appendChunk(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        if outboundStart > 0 && outboundStart == outbound.count {
            outbound.removeAll(keepingCapacity: true)
            outboundStart = 0
        }
        outbound.append(contentsOf: Array(String(bytes.count, radix: 16).utf8))
        outbound.append(contentsOf: [13, 10])
        outbound.append(contentsOf: bytes)
        outbound.append(contentsOf: [13, 10])
        // A live stream's events go out before the loop next polls, all that queued in this
        // iteration in one write, without a writable-callback round trip per event (two epoll_ctl
        // and a wake-up each: most of a fan-out's cost, as ws.fanout measured for WebSockets).
        if isStreaming, headSent, head == nil {
            if !flushScheduled {
                flushScheduled = true
                transport.streamsToFlush.append(self)
            }
        } else {
            lws_callback_on_writable(wsi)
        }
    }

    private var flushScheduled = false

    /// Writes up to one chunk of what is queued now; lws finishes a partial send itself, and the rest
    /// goes out from writable callbacks.
    func flushBeforePoll() {
        flushScheduled = false
        guard !isClosed, isStreaming, head == nil, queuedByteCount > 0 else { return }
        if lws_partial_buffered(wsi) != 0 {
            lws_callback_on_writable(wsi)
            return
        }
        let pre = CHearthLWS_pre()
        let count = min(queuedByteCount, Self.chunkBytesMax)
        let raw = transport.writeScratch
        outbound.withUnsafeBufferPointer { source in
            (raw.baseAddress! + pre).update(from: source.baseAddress! + outboundStart, count: count)
        }
        if lws_write(wsi, raw.baseAddress! + pre, count, LWS_WRITE_HTTP) < 0 {
            lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_SYNC)
            return
        }
        outboundStart += count
        if outboundStart == outbound.count {
            outbound.removeAll(keepingCapacity: outbound.capacity <= 1 << 20)
            outboundStart = 0
        } else {
            lws_callback_on_writable(wsi)
        }
    }

    func finish() {
        guard !isClosed, !streamEnded else { return }
        streamEnded = true
        outbound.append(contentsOf: Array("0\r\n\r\n".utf8))
        lws_callback_on_writable(wsi)
    }

    func closed() {
        guard !isClosed else { return }
        isClosed = true
        releaseBody()
        let callback = onClose
        onClose = nil
        callback?()
    }

    // MARK: Writing

    private static let chunkBytesMax = 64 * 1024

    func writable() -> Int32 {
        if isClosed { return -1 }
        if case .closing = phase, head == nil, queuedByteCount == 0 { return -1 }
        if completionDeferred {
            completionDeferred = false
            return completeTransaction()
        }
        let pre = CHearthLWS_pre()
        if let pending = head {
            head = nil
            // Mark as sent: `head` stays non-nil-like through `headSent` so respond() is not re-entered.
            headSent = true
            let raw = transport.writeScratch
            let result: Int32 = {
                let start = raw.baseAddress! + pre
                let end = raw.baseAddress! + min(raw.count, pre + 8192)
                var cursor: UnsafeMutablePointer<UInt8>? = start
                let contentType = pending.headers.first { $0.0 == "content-type" }?.1
                let length = pending.contentLength.map { lws_filepos_t($0) } ?? CHearthLWS_noContentLength()
                if lws_add_http_common_headers(wsi, UInt32(pending.status), contentType, length, &cursor, end) != 0 {
                    return -1
                }
                for (name, value) in pending.headers where name != "content-type" {
                    if !Self.appendHeader(name, value, at: &cursor, end: end) {
                        return -1
                    }
                }
                if lws_finalize_write_http_header(wsi, start, &cursor, end) != 0 { return -1 }
                return 0
            }()
            if result != 0 { return -1 }
            // A stream never reads another request: give its header table back to lws's pool
            // (max_http_header_pool), which would otherwise cap open streams at the pool's size.
            // Nor is it subject to the per-state timeout (stateTimeoutSeconds), which would end it
            // after that many seconds however lively it is.
            if isStreaming {
                _ = lws_http_headers_detach(wsi)
                lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
            }
            if queuedByteCount > 0 || isStreaming {
                lws_callback_on_writable(wsi)
                return 0
            }
            return completeTransaction()
        }
        if queuedByteCount > 0 {
            let count = min(queuedByteCount, Self.chunkBytesMax)
            let last = count == queuedByteCount
            let final = last && !isStreaming
            let raw = transport.writeScratch
            outbound.withUnsafeBufferPointer { source in
                (raw.baseAddress! + pre).update(from: source.baseAddress! + outboundStart, count: count)
            }
            let written = lws_write(wsi, raw.baseAddress! + pre, count, final ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP)
            if written < 0 { return -1 }
            outboundStart += count
            if outboundStart == outbound.count {
                outbound.removeAll(keepingCapacity: outbound.capacity <= 1 << 20)
                outboundStart = 0
            }
            if !last || lws_partial_buffered(wsi) != 0 {
                lws_callback_on_writable(wsi)
                return 0
            }
            if isStreaming {
                return streamEnded ? -1 : 0
            }
            return completeTransaction()
        }
        if isStreaming && streamEnded { return -1 }
        return 0
    }

    private var headSent = false

    private var isStreaming: Bool {
        if case .streaming = phase { return true }
        return false
    }

    /// Closes the connection once what lws holds of the answer is sent. Inside this connection's own
    /// callback that is the callback's result (see ``callbackResult``); elsewhere it happens now, or
    /// from the writable callback when lws still holds part of the answer. (An lws timeout of
    /// `LWS_TO_KILL_ASYNC` is no substitute: on the libuv loop it fires only when lws's timer next
    /// runs, which can be minutes away.)
    private func endConnection() {
        phase = .closing
        if transport.callbackWSI == wsi { return }
        if lws_partial_buffered(wsi) != 0 {
            lws_callback_on_writable(wsi)
            return
        }
        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_SYNC)
    }

    /// What a request callback returns once it has handed the request over: -1 (lws closes the
    /// connection) when the answer, already given, ended the connection.
    private var callbackResult: Int32 {
        if case .closing = phase { return -1 }
        return 0
    }

    private func completeTransaction() -> Int32 {
        headSent = false
        releaseBody()
        request = HTTPRequest(method: .get, path: "/")
        if closeWhenWritten {
            phase = .closing
            return -1
        }
        phase = .idle
        return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
    }
}
