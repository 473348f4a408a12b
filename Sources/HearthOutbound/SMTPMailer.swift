internal import CCurl
import Foundation

/// Where and how to send email: an SMTP server URL (`smtp://host:587` upgrades with STARTTLS when the
/// server offers it, `smtps://host:465` is TLS from the start), optional login, and the sender address.
public struct SMTPConfiguration: Sendable, Equatable {
    public var url: String
    public var username: String?
    public var password: String?
    /// `Hearth <noreply@example.com>` or a bare address.
    public var from: String
    /// Seconds for the whole exchange.
    public var timeout: Int = 30

    public init(url: String, username: String? = nil, password: String? = nil, from: String) {
        self.url = url
        self.username = username
        self.password = password
        self.from = from
    }
}

/// A failed delivery: libcurl's message, never the password.
public struct MailError: Error, CustomStringConvertible, Sendable {
    public let description: String
}

/// Sends plain-text email through libcurl's SMTP client. Each `send` uses its own curl handle, so calls
/// may run on any thread at once.
public struct SMTPMailer: Sendable {
    public let configuration: SMTPConfiguration

    public init(configuration: SMTPConfiguration) {
        self.configuration = configuration
    }

    /// The bare address inside `Name <address>`, or the text itself.
    static func address(_ text: String) -> String {
        guard let open = text.lastIndex(of: "<"), let close = text.lastIndex(of: ">"), open < close else {
            return text.trimmingCharacters(in: .whitespaces)
        }
        return String(text[text.index(after: open)..<close])
    }

    /// The RFC 5322 message: headers, a blank line, the body with CRLF line ends.
    static func message(from: String, to: String, subject: String, body: String, date: Date = Date()) -> [UInt8] {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        func clean(_ header: String) -> String { header.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ") }
        let lines = [
            "Date: \(formatter.string(from: date))", "From: \(clean(from))", "To: \(clean(to))", "Subject: \(clean(subject))",
            "MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: 8bit", "",
        ] + body.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(".") ? "." + $0 : String($0) }
        return Array(lines.joined(separator: "\r\n").utf8) + Array("\r\n".utf8)
    }

    /// Sends one message to `to`; blocks until the server accepted it or the exchange failed.
    public func send(to: String, subject: String, body: String) throws(MailError) {
        _ = CurlGlobal.ready
        guard let curl = curl_easy_init() else { throw MailError(description: "curl_easy_init failed") }
        defer { curl_easy_cleanup(curl) }
        let payload = Payload(Self.message(from: configuration.from, to: to, subject: subject, body: body))
        let recipients = curl_slist_append(nil, "<\(Self.address(to))>")
        defer { curl_slist_free_all(recipients) }

        var codes: [CURLcode] = []
        codes.append(CCurl_setopt_string(curl, CURLOPT_URL, configuration.url))
        codes.append(CCurl_setopt_string(curl, CURLOPT_MAIL_FROM, "<\(Self.address(configuration.from))>"))
        codes.append(CCurl_setopt_slist(curl, CURLOPT_MAIL_RCPT, recipients))
        codes.append(CCurl_setopt_long(curl, CURLOPT_UPLOAD, 1))
        codes.append(CCurl_setopt_long(curl, CURLOPT_USE_SSL, Int(CURLUSESSL_TRY.rawValue)))
        codes.append(CCurl_setopt_long(curl, CURLOPT_TIMEOUT, configuration.timeout))
        codes.append(CCurl_setopt_long(curl, CURLOPT_NOSIGNAL, 1))
        if let username = configuration.username { codes.append(CCurl_setopt_string(curl, CURLOPT_USERNAME, username)) }
        if let password = configuration.password { codes.append(CCurl_setopt_string(curl, CURLOPT_PASSWORD, password)) }
        codes.append(CCurl_setopt_read_function(curl, { buffer, size, count, context in
            guard let buffer, let context else { return 0 }
            return Unmanaged<Payload>.fromOpaque(context).takeUnretainedValue().read(into: buffer, capacity: size * count)
        }))
        let context = Unmanaged.passRetained(payload)
        defer { context.release() }
        codes.append(CCurl_setopt_pointer(curl, CURLOPT_READDATA, context.toOpaque()))
        if let failed = codes.first(where: { $0 != CURLE_OK }) {
            throw MailError(description: "SMTP setup: \(String(cString: curl_easy_strerror(failed)))")
        }
        let result = curl_easy_perform(curl)
        guard result == CURLE_OK else {
            throw MailError(description: "SMTP delivery to \(configuration.url) failed: \(String(cString: curl_easy_strerror(result)))")
        }
    }
}

/// The message bytes libcurl reads through the read callback, in pieces.
private final class Payload {
    let bytes: [UInt8]
    var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        let count = min(capacity, bytes.count - offset)
        guard count > 0 else { return 0 }
        bytes.withUnsafeBufferPointer { source in
            UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + offset, byteCount: count)
        }
        offset += count
        return count
    }
}
