internal import CLibPQ
public import HearthStorage

/// Where a PostgreSQL engine connects: a `postgresql://user:password@host:port/dbname` URL, checked by
/// libpq's own parser (`PQconninfoParse`, so Hearth accepts exactly what libpq does: query parameters
/// such as `?sslmode=require`, a Unix socket directory as `?host=/run/postgresql`), and shown in messages
/// without its password.
///
///     let endpoint = try PostgresEndpoint(url: "postgresql://hearth:secret@db:5432/hearth")
///     endpoint.description   // postgresql://hearth@db:5432/hearth
///
/// `hearth serve --storage` checks its URL with this before anything connects, and prints
/// ``description`` wherever it names the server.
public struct PostgresEndpoint: Sendable, CustomStringConvertible {
    /// The URL as given, password included: only ever handed to libpq.
    let url: String
    /// The URL without its password, for messages and `location`.
    public let description: String

    /// Schemes libpq reads as a URL (anything else it would read as `key=value` pairs).
    public static let schemes = ["postgresql://", "postgres://"]

    /// - Throws: ``StorageError`` (`.invalidData`) when `url` is not a PostgreSQL URL libpq accepts; the
    ///   message never repeats the URL, which may hold a password.
    public init(url: String) throws(StorageError) {
        guard Self.schemes.contains(where: { url.hasPrefix($0) }) else {
            throw StorageError(.invalidData, "the PostgreSQL address is not a postgresql:// URL. Use postgresql://user:password@host:port/dbname.")
        }
        var error: UnsafeMutablePointer<CChar>?
        // PQconninfoParse returns an array ending with a nil keyword, freed with PQconninfoFree; an error
        // message, when there is one, is freed with PQfreemem.
        guard let options = PQconninfoParse(url, &error) else {
            let reason = error.map { Self.withoutQuotes(String(cString: $0).trimmingTrailingWhitespace) } ?? "out of memory"
            if let error { PQfreemem(error) }
            throw StorageError(.invalidData, "the PostgreSQL URL does not parse (\(reason)). Use postgresql://user:password@host:port/dbname.")
        }
        defer { PQconninfoFree(options) }
        var values: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { values[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        self.url = url
        description = Self.redacted(values)
    }

    /// libpq's parse errors quote what they could not read, which may be the whole URL or its password
    /// part (`invalid percent-encoded token: "…"`): every quoted part is left out.
    static func withoutQuotes(_ message: String) -> String {
        var text = ""
        var quoted = false
        for character in message {
            if character == "\"" {
                if !quoted { text += "\"…\"" }
                quoted.toggle()
            } else if !quoted {
                text.append(character)
            }
        }
        return text
    }

    /// `postgresql://user@host:port/dbname` from libpq's parsed options; parts the URL left out are left
    /// out here (libpq fills them from the environment and its defaults when it connects).
    static func redacted(_ options: [String: String]) -> String {
        var text = "postgresql://"
        if let user = options["user"], !user.isEmpty { text += user + "@" }
        text += options["host"] ?? options["hostaddr"] ?? ""
        if let port = options["port"], !port.isEmpty { text += ":" + port }
        text += "/" + (options["dbname"] ?? "")
        return text
    }
}

extension String {
    /// Without the newline libpq ends its messages with.
    var trimmingTrailingWhitespace: String {
        var text = Substring(self)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return String(text)
    }
}
