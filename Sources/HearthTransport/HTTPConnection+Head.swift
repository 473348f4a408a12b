internal import CLibWebSockets
import HearthProtocol

/// Reading a request's head out of libwebsockets: headers by token or by name, and the query, copied
/// through the loop's scratch buffer where one is given. Static: the upgrade filter reads them before a
/// connection object exists.
extension HTTPConnection {
    /// The query's `name=value` items, decoded by lws, each split at its first `=`; nil when one is
    /// not UTF-8. Copied through `scratch` when it is large enough (the per-request path), else
    /// through a buffer of their own.
    static func queryItems(
        _ wsi: OpaquePointer, scratch: UnsafeMutableBufferPointer<CChar>? = nil
    ) -> [(name: String, value: String)]? {
        var items: [(name: String, value: String)] = []
        var valid = true
        let total = Int(lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS))
        guard total > 0 else { return items }
        func readFragments(_ buffer: UnsafeMutableBufferPointer<CChar>) {
            var index: Int32 = 0
            while true {
                let copied = lws_hdr_copy_fragment(wsi, buffer.baseAddress, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS, index)
                if copied < 0 { break }
                let bytes = UnsafeRawBufferPointer(start: buffer.baseAddress, count: Int(copied))
                let equals = bytes.firstIndex(of: UInt8(ascii: "=")) ?? bytes.count
                let name = String(validating: UnsafeRawBufferPointer(rebasing: bytes[..<equals]), as: UTF8.self)
                let value = equals < bytes.count
                    ? String(validating: UnsafeRawBufferPointer(rebasing: bytes[(equals + 1)...]), as: UTF8.self) : ""
                if let name, let value { items.append((name, value)) } else { valid = false }
                index += 1
            }
        }
        if let scratch, scratch.count >= total + 2 {
            readFragments(scratch)
        } else {
            var buffer = [CChar](repeating: 0, count: total + 2)
            buffer.withUnsafeMutableBufferPointer { readFragments($0) }
        }
        return valid ? items : nil
    }

    /// Every header of ``HTTPRequest/headerNames`` with lws's token for it, or nil (then it is looked up
    /// by name, with the colon lws expects). Built once: no hashing per request.
    static let headerTokens: [(name: String, token: lws_token_indexes?)] = HTTPRequest.headerNames.map { name in
        let known: [(String, lws_token_indexes)] = [
            ("host", WSI_TOKEN_HOST), ("authorization", WSI_TOKEN_HTTP_AUTHORIZATION), ("accept", WSI_TOKEN_HTTP_ACCEPT),
            ("content-type", WSI_TOKEN_HTTP_CONTENT_TYPE), ("content-length", WSI_TOKEN_HTTP_CONTENT_LENGTH),
            ("if-match", WSI_TOKEN_HTTP_IF_MATCH), ("if-none-match", WSI_TOKEN_HTTP_IF_NONE_MATCH),
            ("origin", WSI_TOKEN_ORIGIN), ("access-control-request-headers", WSI_TOKEN_HTTP_AC_REQUEST_HEADERS),
            ("x-forwarded-for", WSI_TOKEN_X_FORWARDED_FOR), ("cookie", WSI_TOKEN_HTTP_COOKIE),
        ]
        return (name, known.first { $0.0 == name }?.1)
    }
    static let customHeaderKeys: [String: [CChar]] = Dictionary(
        uniqueKeysWithValues: HTTPRequest.headerNames.map { ($0, Array(($0 + ":").utf8CString.dropLast())) })

    /// A header by lws token, for the WebSocket upgrade filter, which runs before a `Connection`
    /// exists (rare: allocates its own buffer).
    static func header(_ token: lws_token_indexes, _ wsi: OpaquePointer) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A header by name, for the upgrade filter (see above).
    static func header(_ name: String, _ wsi: OpaquePointer) -> String? {
        if let token = headerTokens.first(where: { $0.name == name })?.token { return header(token, wsi) }
        let key = Array((name + ":").utf8CString.dropLast())
        let length = Int(lws_hdr_custom_length(wsi, key, Int32(key.count)))
        guard length >= 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_custom_copy(wsi, &buffer, Int32(buffer.count), key, Int32(key.count)) >= 0 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A header's value copied straight from lws into a String through the loop's scratch buffer,
    /// nil when absent (the per-request path).
    func header(_ name: String, token: lws_token_indexes?) -> String? {
        let scratch = transport.headerScratch
        if let token {
            let length = Int(lws_hdr_total_length(wsi, token))
            guard length > 0, length < scratch.count else { return nil }
            let copied = lws_hdr_copy(wsi, scratch.baseAddress, Int32(scratch.count), token)
            guard copied >= 0 else { return nil }
            return String(decoding: UnsafeRawBufferPointer(start: scratch.baseAddress, count: Int(copied)), as: UTF8.self)
        }
        guard let key = Self.customHeaderKeys[name] else { return nil }
        let length = Int(lws_hdr_custom_length(wsi, key, Int32(key.count)))
        guard length >= 0, length < scratch.count else { return nil }
        guard lws_hdr_custom_copy(wsi, scratch.baseAddress, Int32(scratch.count), key, Int32(key.count)) >= 0 else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: scratch.baseAddress, count: length), as: UTF8.self)
    }
}
