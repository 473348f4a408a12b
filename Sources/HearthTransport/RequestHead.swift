internal import CLibWebSockets
import HearthProtocol
#if canImport(Glibc)
    import Glibc
#endif

/// The checks on a request head that lws leaves to its user, so that every head gets an answer: lws
/// itself closes the connection without one when a head overflows its buffer or a WebSocket upgrade
/// lacks a header. Loop thread only (it reads lws's header table for `wsi`).
enum RequestHead {
    /// The tokens that hold the request target: one per method's path, and the query arguments.
    static func isTargetToken(_ token: UInt32) -> Bool {
        let targets = [
            WSI_TOKEN_GET_URI, WSI_TOKEN_POST_URI, WSI_TOKEN_OPTIONS_URI, WSI_TOKEN_PUT_URI, WSI_TOKEN_PATCH_URI,
            WSI_TOKEN_DELETE_URI, WSI_TOKEN_HEAD_URI, WSI_TOKEN_HTTP_URI_ARGS, WSI_TOKEN_CONNECT,
        ]
        return targets.contains { $0.rawValue == token }
    }

    /// Every header token lws knows, with the length of its name on the wire (`name: value\r\n` is the
    /// name, two bytes, the value and two more) and whether it is part of the target. Built once.
    private static let tokens: [(token: lws_token_indexes, nameBytes: Int, isTarget: Bool)] =
        (0..<WSI_TOKEN_COUNT.rawValue).map { raw in
            let token = lws_token_indexes(rawValue: raw)
            let nameBytes = lws_token_to_string(token).map { Int(strlen(UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))) } ?? 0
            return (token, nameBytes, isTargetToken(raw))
        }

    /// 414 for a request target over ``ServerLimits/requestTargetBytesMax``, 431 for a head over
    /// ``ServerLimits/requestHeaderBytesMax`` or a header lws cut at its token limit; nil when within
    /// both. Counts what lws recognised: headers lws does not know are kept only up to its buffer
    /// (``ServerLimits/requestHeadBufferBytes``), past which lws closes the connection itself.
    static func sizeRefusal(_ wsi: OpaquePointer) -> (Int, String)? {
        var targetBytes = 0
        var headBytes = 0
        var headerCut = false
        for entry in tokens {
            let length = Int(lws_hdr_total_length(wsi, entry.token))
            guard length > 0 else { continue }
            headBytes += entry.nameBytes + length + 4
            if entry.isTarget {
                targetBytes += length + 1
            } else if length > ServerLimits.requestHeaderBytesMax {
                headerCut = true
            }
        }
        if targetBytes > ServerLimits.requestTargetBytesMax {
            return (414, "The request's path and query are over \(ServerLimits.requestTargetBytesMax) bytes")
        }
        if headerCut || headBytes > ServerLimits.requestHeaderBytesMax {
            return (431, "The request's headers are over \(ServerLimits.requestHeaderBytesMax) bytes")
        }
        return nil
    }

    /// Why a WebSocket upgrade cannot be served (RFC 6455 §4.2.1), or nil. Firebase's SDKs ask for no
    /// subprotocol, and none is served.
    static func webSocketUpgradeRefusal(key: String?, host: String?, connection: String?, subprotocol: String?) -> (Int, String)? {
        guard let key, !key.isEmpty, key.utf8.count < 128 else {
            return (400, "A WebSocket upgrade needs one Sec-WebSocket-Key header")
        }
        guard let host, !host.isEmpty else { return (400, "A WebSocket upgrade needs a Host header") }
        guard let connection, connection.lowercased().contains("upgrade") else {
            return (400, "A WebSocket upgrade needs 'Connection: Upgrade'")
        }
        if let subprotocol, !subprotocol.isEmpty {
            return (400, "No WebSocket subprotocol is served here (asked for '\(subprotocol.prefix(40))')")
        }
        return nil
    }
}
