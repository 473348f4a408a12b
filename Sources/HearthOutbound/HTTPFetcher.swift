internal import CCurl
import Foundation

/// One request the server makes to another service (an identity provider's keys, its user API).
public struct OutboundRequest: Sendable, Equatable {
    public var url: String
    /// `GET` or `POST`.
    public var method: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]?

    public init(url: String, method: String = "GET", headers: [(name: String, value: String)] = [], body: [UInt8]? = nil) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.url == b.url && a.method == b.method && a.body == b.body
            && a.headers.map(\.name) == b.headers.map(\.name) && a.headers.map(\.value) == b.headers.map(\.value)
    }
}

/// The answer: its status, its headers (names lower-cased; the last of a repeated header) and its body.
public struct OutboundResponse: Sendable, Equatable {
    public var status: Int
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Why a request got no answer. The description names the URL and what to check, never a credential.
public enum OutboundError: Error, Equatable, CustomStringConvertible, Sendable {
    /// Not an `https` URL (or `http` to a loopback address, for local providers and tests).
    case notAllowed(url: String)
    case timedOut(url: String, seconds: Int)
    case tooLarge(url: String, limit: Int)
    case failed(url: String, reason: String)
    /// The URL's host resolved to an address the policy forbids (``OutboundAddresses``).
    case addressRefused(url: String, address: String)

    public var description: String {
        switch self {
        case .addressRefused(let url, let address):
            "\(url) resolved to \(address), a private or loopback address this server may not post to (allow it with --hooks-allow)"
        case .notAllowed(let url): "\(url) is not an https URL (plain http is allowed to loopback addresses only)"
        case .timedOut(let url, let seconds): "\(url) did not answer within \(seconds) s"
        case .tooLarge(let url, let limit): "\(url) answered with more than \(limit) bytes"
        case .failed(let url, let reason): "\(url): \(reason)"
        }
    }
}

/// How long and how much: every request the server makes is bounded by these.
public struct OutboundLimits: Sendable, Equatable {
    public var connectSeconds: Int
    public var totalSeconds: Int
    public var responseBytesMax: Int

    public init(connectSeconds: Int = 3, totalSeconds: Int = 5, responseBytesMax: Int = 1 << 20) {
        self.connectSeconds = connectSeconds
        self.totalSeconds = totalSeconds
        self.responseBytesMax = responseBytesMax
    }
}

/// Makes outbound HTTP requests; blocks the calling thread (never the event loop's: callers run on the
/// auth queue) until the answer or the limits end it.
public protocol HTTPFetching: Sendable {
    func fetch(_ request: OutboundRequest) throws(OutboundError) -> OutboundResponse
}

/// ``HTTPFetching`` through libcurl: `https` anywhere, plain `http` only to loopback addresses, no
/// redirects followed (a provider's keys are where the configuration says), no proxy from the
/// environment, and ``OutboundLimits`` on time and size. Each request uses its own handle, so calls may
/// run on any thread at once.
public struct HTTPFetcher: HTTPFetching {
    public let limits: OutboundLimits
    public let userAgent: String
    /// Which addresses requests may connect to.
    public let addresses: OutboundAddresses

    public init(limits: OutboundLimits = OutboundLimits(), userAgent: String = "Hearth", addresses: OutboundAddresses = .any) {
        self.limits = limits
        self.userAgent = userAgent
        self.addresses = addresses
    }

    /// Whether `url` may be fetched: https, or http to 127.0.0.0/8, ::1 or localhost.
    public static func allows(_ url: String, plainHTTPHosts: Set<String> = []) -> Bool {
        guard let parsed = URLComponents(string: url), let scheme = parsed.scheme?.lowercased(), let host = parsed.host?.lowercased(),
            !host.isEmpty
        else { return false }
        if scheme == "https" { return true }
        guard scheme == "http" else { return false }
        return host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.") || plainHTTPHosts.contains(host)
    }

    public func fetch(_ request: OutboundRequest) throws(OutboundError) -> OutboundResponse {
        guard Self.allows(request.url, plainHTTPHosts: addresses.allowedHosts) else { throw .notAllowed(url: request.url) }
        let host = URLComponents(string: request.url)?.host ?? ""
        _ = CurlGlobal.ready
        guard let curl = curl_easy_init() else { throw .failed(url: request.url, reason: "curl_easy_init failed") }
        defer { curl_easy_cleanup(curl) }
        let received = Received(limit: limits.responseBytesMax, addresses: addresses == .any ? nil : addresses, host: host)
        var headerList: UnsafeMutablePointer<curl_slist>?
        for (name, value) in request.headers { headerList = curl_slist_append(headerList, "\(name): \(value)") }
        defer { curl_slist_free_all(headerList) }

        var codes: [CURLcode] = []
        codes.append(CCurl_setopt_string(curl, CURLOPT_URL, request.url))
        codes.append(CCurl_setopt_string(curl, CURLOPT_PROTOCOLS_STR, "http,https"))
        codes.append(CCurl_setopt_long(curl, CURLOPT_FOLLOWLOCATION, 0))
        codes.append(CCurl_setopt_string(curl, CURLOPT_NOPROXY, "*"))
        codes.append(CCurl_setopt_long(curl, CURLOPT_CONNECTTIMEOUT, limits.connectSeconds))
        codes.append(CCurl_setopt_long(curl, CURLOPT_TIMEOUT, limits.totalSeconds))
        codes.append(CCurl_setopt_long(curl, CURLOPT_NOSIGNAL, 1))
        codes.append(CCurl_setopt_string(curl, CURLOPT_USERAGENT, userAgent))
        if let headerList { codes.append(CCurl_setopt_slist(curl, CURLOPT_HTTPHEADER, headerList)) }
        let body = request.body.map { Data($0) }
        if request.method == "POST" {
            codes.append(CCurl_setopt_long(curl, CURLOPT_POST, 1))
            codes.append(CCurl_setopt_long(curl, CURLOPT_POSTFIELDSIZE, body?.count ?? 0))
        }
        codes.append(CCurl_setopt_write_function(curl, { buffer, size, count, context in
            guard let buffer, let context else { return 0 }
            return Unmanaged<Received>.fromOpaque(context).takeUnretainedValue().body(buffer, size * count)
        }))
        codes.append(CCurl_setopt_header_function(curl, { buffer, size, count, context in
            guard let buffer, let context else { return 0 }
            return Unmanaged<Received>.fromOpaque(context).takeUnretainedValue().header(buffer, size * count)
        }))
        let context = Unmanaged.passRetained(received)
        defer { context.release() }
        codes.append(CCurl_setopt_pointer(curl, CURLOPT_WRITEDATA, context.toOpaque()))
        codes.append(CCurl_setopt_pointer(curl, CURLOPT_HEADERDATA, context.toOpaque()))
        if received.addresses != nil {
            codes.append(CCurl_setopt_prereq_function(curl, { context, address, _, _, _ in
                guard let context, let address else { return 1 }
                return Unmanaged<Received>.fromOpaque(context).takeUnretainedValue().connected(to: String(cString: address)) ? 0 : 1
            }))
            codes.append(CCurl_setopt_pointer(curl, CURLOPT_PREREQDATA, context.toOpaque()))
        }
        if let failed = codes.first(where: { $0 != CURLE_OK }) {
            throw .failed(url: request.url, reason: "setup: \(String(cString: curl_easy_strerror(failed)))")
        }
        let result: CURLcode = (body ?? Data()).withUnsafeBytes { raw in
            if request.method == "POST" {
                // libcurl reads the body during perform, from memory that stays alive until then.
                _ = CCurl_setopt_pointer(curl, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress))
            }
            return curl_easy_perform(curl)
        }
        switch result {
        case CURLE_OK: break
        case CURLE_OPERATION_TIMEDOUT: throw .timedOut(url: request.url, seconds: limits.totalSeconds)
        case CURLE_WRITE_ERROR where received.overflowed: throw .tooLarge(url: request.url, limit: limits.responseBytesMax)
        case CURLE_ABORTED_BY_CALLBACK where received.refusedAddress != nil:
            throw .addressRefused(url: request.url, address: received.refusedAddress ?? "")
        default: throw .failed(url: request.url, reason: String(cString: curl_easy_strerror(result)))
        }
        var status = 0
        _ = CCurl_getinfo_long(curl, CURLINFO_RESPONSE_CODE, &status)
        return OutboundResponse(status: status, headers: received.headers, body: received.bytes)
    }
}

/// libcurl's one-time global set-up, shared by every handle of this module.
enum CurlGlobal {
    static let ready: Bool = {
        precondition(curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK, "libcurl could not initialise")
        return true
    }()
}

/// What the callbacks collect during one perform (touched only by libcurl's calls on that thread).
private final class Received {
    let limit: Int
    let addresses: OutboundAddresses?
    let host: String
    var bytes: [UInt8] = []
    var headers: [String: String] = [:]
    var overflowed = false
    var refusedAddress: String?

    init(limit: Int, addresses: OutboundAddresses?, host: String) {
        self.limit = limit
        self.addresses = addresses
        self.host = host
    }

    /// Whether the connection libcurl made may carry the request.
    func connected(to address: String) -> Bool {
        guard let addresses, !addresses.allows(address: address, host: host) else { return true }
        refusedAddress = address
        return false
    }

    /// Taking fewer bytes than offered makes libcurl stop with CURLE_WRITE_ERROR.
    func body(_ buffer: UnsafeMutablePointer<CChar>, _ count: Int) -> Int {
        guard bytes.count + count <= limit else {
            overflowed = true
            return 0
        }
        buffer.withMemoryRebound(to: UInt8.self, capacity: count) { bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: count)) }
        return count
    }

    /// One header line; the status line and the blank line end up without a colon and are skipped.
    func header(_ buffer: UnsafeMutablePointer<CChar>, _ count: Int) -> Int {
        let line = buffer.withMemoryRebound(to: UInt8.self, capacity: count) { String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self) }
        if line.hasPrefix("HTTP/") { headers = [:] }  // a 100 Continue's headers are not the answer's
        if let colon = line.firstIndex(of: ":"), headers.count < 100 {
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
            headers[name] = value
        }
        return count
    }
}
