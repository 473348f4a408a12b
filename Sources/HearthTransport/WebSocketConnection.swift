import HearthProtocol
internal import CLibWebSockets
import Foundation

/// One upgraded WebSocket (`/.ws`): reassembles WebSocket fragments into text messages for its
/// realtime session and writes the session's frames in order from a bounded queue. Loop thread only.
final class WebSocketConnection: RealtimeSink {
    private enum Outgoing {
        case text([UInt8])
        case ping
    }

    let wsi: OpaquePointer
    unowned let transport: HTTPServerTransport
    var session: (any RealtimeSessionHandle)?
    private var queue: [Outgoing] = []
    private var queueStart = 0
    private(set) var queuedByteCount = 0
    private var incoming: [UInt8] = []
    /// What this connection holds of the transport's body budget for its messages (see `holdBudget`).
    private var heldMessages = HeldMessageBytes()
    private var closeReason: String?
    private var closeNow = false
    private var isClosed = false
    /// Milliseconds of the last frame (or pong) received, and whether a ping is out.
    var lastHeard: Int64
    var pingSent = false
    /// When the queue went over the soft limit (0: it is not over).
    var overSoftLimitSince: Int64 = 0
    private var budget: OutboundBudget

    init(wsi: OpaquePointer, transport: HTTPServerTransport, now: Int64) {
        self.wsi = wsi
        self.transport = transport
        lastHeard = now
        budget = OutboundBudget(limitBytes: transport.configuration.outboundBufferBytesMax)
    }

    var isOverSoftLimit: Bool { budget.isOverSoftLimit(queuedBytes: queuedByteCount) }

    // MARK: RealtimeSink

    func sendMessage(_ frames: [[UInt8]]) -> Bool {
        guard !isClosed, closeReason == nil else { return false }
        if budget.isOver(queuedBytes: queuedByteCount) { return false }
        budget.willQueue(messageBytes: frames.reduce(0) { $0 + $1.count }, queuedBytes: queuedByteCount)
        if queueStart == queue.count, queueStart > 0 {
            queue.removeAll(keepingCapacity: true)
            queueStart = 0
        }
        for bytes in frames {
            queue.append(.text(bytes))
            queuedByteCount += bytes.count
        }
        if !flushScheduled {
            flushScheduled = true
            transport.webSocketsToFlush.append(self)
        }
        return true
    }

    /// Whether this socket is on the transport's list to flush before the loop next polls.
    private var flushScheduled = false

    /// Writes what was queued during this loop iteration straight away, without asking lws for a
    /// writable callback first: that round trip cost two `epoll_ctl`s and a wake-up per delivery, most
    /// of a fan-out's time (docs/BENCHMARKS.md, ws.fanout). Whatever lws cannot send now it buffers and
    /// finishes itself; what is left in the queue goes out from writable callbacks as before.
    func flushBeforePoll() {
        flushScheduled = false
        guard !isClosed, closeReason == nil, queueStart < queue.count else { return }
        if lws_partial_buffered(wsi) != 0 {
            lws_callback_on_writable(wsi)
            return
        }
        let written = writeNext()
        if written < 0 {
            close(reason: "write failed", immediately: true)
            return
        }
        if queueStart == queue.count {
            queue.removeAll(keepingCapacity: queue.capacity <= 4096)
            queueStart = 0
        } else {
            lws_callback_on_writable(wsi)
        }
    }

    /// Writes the head of the queue: every text message up to the packet size in one write when two or
    /// more are waiting, otherwise the one entry (a ping, or a lone or oversized message).
    private func writeNext() -> Int32 {
        let pre = CHearthLWS_pre()
        if case .text(let first) = queue[queueStart], first.count + Self.frameHeaderBytesMax <= Self.coalescedBytesMax,
            queueStart + 1 < queue.count, case .text = queue[queueStart + 1]
        {
            return writeCoalescedTextFrames(pre: pre)
        }
        return writeOne(pre: pre)
    }

    func close(reason: String, immediately: Bool) {
        guard !isClosed, closeReason == nil else { return }
        closeReason = reason
        closeNow = immediately
        if immediately {
            // A reader too slow to take more may never make the socket writable again: the close frame is
            // attempted, and the connection is killed on the next loop pass regardless.
            queue = []
            queueStart = 0
            queuedByteCount = 0
            lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
        } else {
            // What is queued gets 5 s to leave before the connection is killed anyway.
            lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, 5)
        }
        lws_callback_on_writable(wsi)
    }

    func sendPing() {
        guard !isClosed, closeReason == nil, !pingSent else { return }
        pingSent = true
        queue.append(.ping)
        lws_callback_on_writable(wsi)
    }

    // MARK: lws events

    func received(_ bytes: UnsafeRawBufferPointer, now: Int64) -> Int32 {
        lastHeard = now
        pingSent = false
        // Closing: what still arrives is not handled (nor held against the budget).
        guard closeReason == nil else { return 0 }
        if incoming.count + bytes.count > ServerLimits.realtimeMessageBytesMax {
            close(reason: "message too large", immediately: true)
            return 0
        }
        incoming.append(contentsOf: bytes)
        // The message arriving, and the one the session reassembles, which this frame may complete and
        // which is parsed and written before `receive` returns.
        guard holdBudget(incoming.count + (session?.reassemblingByteCount ?? 0)) else { return 0 }
        guard lws_is_final_fragment(wsi) != 0, lws_remaining_packet_payload(wsi) == 0 else { return 0 }
        let message = incoming
        incoming.removeAll(keepingCapacity: incoming.capacity <= 64 * 1024)
        if lws_frame_is_binary(wsi) != 0 { return 0 }
        session?.receive(frame: message)
        _ = holdBudget(session?.reassemblingByteCount ?? 0)
        return 0
    }

    /// Holds the transport's body budget (under a memory limit, `RequestBodyBudget`) at what `held`
    /// bytes of messages need (``HeldMessageBytes``), or closes the connection with the reason when that
    /// does not fit and returns false.
    private func holdBudget(_ held: Int) -> Bool {
        guard let refusal = heldMessages.hold(held, from: transport) else { return true }
        // Not at once: the close frame, which says why, leaves first (what still arrives is ignored). A
        // client still sending may see only the connection end (the unread bytes make the kernel reset
        // it), so the reason is logged too.
        refuse(refusal.reason, detail: refusal.detail)
        return false
    }

    private func refuse(_ reason: String, detail: String? = nil) {
        transport.configuration.log("realtime: a \(held(detail)) closed: \(reason)")
        close(reason: reason, immediately: false)
    }

    private func held(_ detail: String?) -> String {
        "connection's message of \(incoming.count + (session?.reassemblingByteCount ?? 0)) bytes" + (detail.map { " (\($0))" } ?? "")
    }

    private func releaseBudget() { heldMessages.release(to: transport) }

    func heardPong(now: Int64) {
        lastHeard = now
        pingSent = false
    }

    func closed() {
        guard !isClosed else { return }
        isClosed = true
        releaseBudget()
        queue = []
        queuedByteCount = 0
        let session = self.session
        self.session = nil
        session?.closed()
    }

    /// Writes one queued frame (lws allows one `lws_write` per writable callback on a WebSocket).
    func writable() -> Int32 {
        if isClosed { return -1 }
        if let reason = closeReason, closeNow || queueStart == queue.count {
            var text = Array(reason.utf8.prefix(120))
            lws_close_reason(wsi, closeNow ? LWS_CLOSE_STATUS_POLICY_VIOLATION : LWS_CLOSE_STATUS_NORMAL, &text, text.count)
            return -1
        }
        guard queueStart < queue.count else { return 0 }
        let written = writeNext()
        if written < 0 { return -1 }
        if queueStart == queue.count {
            queue.removeAll(keepingCapacity: queue.capacity <= 4096)
            queueStart = 0
            if closeReason != nil { lws_callback_on_writable(wsi) }
        } else {
            lws_callback_on_writable(wsi)
        }
        return 0
    }

    /// Most bytes of ready-made frames one write sends (lws's `tx_packet_size`).
    static let coalescedBytesMax = 64 * 1024
    /// Largest WebSocket frame header a server writes (RFC 6455 §5.2: 2 bytes, then 8 of length).
    static let frameHeaderBytesMax = 10

    /// Writes the queued text messages at the head of the queue, up to ``coalescedBytesMax``, as
    /// ready-made unmasked WebSocket frames in one `lws_write`: a fan-out queues one or more pushes per
    /// commit on every listener, and one send for all of them instead of one send and one writable
    /// round trip per frame is most of what a delivery costs (docs/BENCHMARKS.md, ws.fanout). lws passes
    /// `LWS_WRITE_HTTP` bytes through unframed (and buffers a partial send itself). The frames are built
    /// in the transport's write scratch, not a buffer of their own: allocating and freeing 64 KiB per
    /// socket per flush made glibc hand pages back and fault them in again.
    private func writeCoalescedTextFrames(pre: Int) -> Int32 {
        let scratch = transport.writeScratch
        precondition(scratch.count >= pre + Self.coalescedBytesMax, "the write scratch must hold a coalesced write")
        var end = pre
        while queueStart < queue.count, case .text(let bytes) = queue[queueStart],
            end - pre + bytes.count + Self.frameHeaderBytesMax <= Self.coalescedBytesMax
        {
            end = Self.writeServerTextFrame(bytes, into: scratch, at: end)
            queuedByteCount -= bytes.count
            queueStart += 1
        }
        return lws_write(wsi, scratch.baseAddress! + pre, end - pre, LWS_WRITE_HTTP)
    }

    /// Writes one final, unmasked text frame (RFC 6455 §5.2), as lws would frame it, at `offset`;
    /// returns the offset after it. The caller leaves room for ``frameHeaderBytesMax`` plus the payload.
    static func writeServerTextFrame(_ payload: [UInt8], into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) -> Int {
        var position = offset
        func put(_ byte: UInt8) {
            buffer[position] = byte
            position += 1
        }
        put(0x81)
        if payload.count < 126 {
            put(UInt8(payload.count))
        } else if payload.count < 65536 {
            put(126)
            put(UInt8(payload.count >> 8))
            put(UInt8(payload.count & 0xFF))
        } else {
            put(127)
            for shift in stride(from: 56, through: 0, by: -8) { put(UInt8((payload.count >> shift) & 0xFF)) }
        }
        _ = payload.withUnsafeBufferPointer { source in
            UnsafeMutableBufferPointer(rebasing: buffer[position..<(position + source.count)]).update(fromContentsOf: source)
        }
        return position + payload.count
    }

    /// ``writeServerTextFrame(_:into:at:)`` appended to an array.
    static func appendServerTextFrame(_ payload: [UInt8], to buffer: inout [UInt8]) {
        let start = buffer.count
        buffer += [UInt8](repeating: 0, count: payload.count + frameHeaderBytesMax)
        let end = buffer.withUnsafeMutableBufferPointer { writeServerTextFrame(payload, into: $0, at: start) }
        buffer.removeSubrange(end...)
    }

    /// Writes the one item at the head of the queue through lws's own framing.
    private func writeOne(pre: Int) -> Int32 {
        let item = queue[queueStart]
        queueStart += 1
        let written: Int32
        switch item {
        case .text(let bytes):
            queuedByteCount -= bytes.count
            let scratch = transport.writeScratch
            if pre + bytes.count <= scratch.count {
                _ = UnsafeMutableBufferPointer(rebasing: scratch[pre..<(pre + bytes.count)]).update(fromContentsOf: bytes)
                written = lws_write(wsi, scratch.baseAddress! + pre, bytes.count, LWS_WRITE_TEXT)
            } else {
                var buffer = [UInt8](repeating: 0, count: pre + bytes.count)
                _ = buffer.withUnsafeMutableBufferPointer { raw in
                    UnsafeMutableBufferPointer(rebasing: raw[pre...]).update(fromContentsOf: bytes)
                }
                written = buffer.withUnsafeMutableBufferPointer { raw in
                    lws_write(wsi, raw.baseAddress! + pre, bytes.count, LWS_WRITE_TEXT)
                }
            }
        case .ping:
            var buffer = [UInt8](repeating: 0, count: pre + 1)
            written = buffer.withUnsafeMutableBufferPointer { raw in
                lws_write(wsi, raw.baseAddress! + pre, 0, LWS_WRITE_PING)
            }
        }
        return written
    }
}
