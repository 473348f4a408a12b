public import Foundation

/// A `Date?` property that the database server fills in: FirebaseDatabaseSwift's `@ServerTimestamp`.
///
/// Encoded, a nil date becomes the server-value placeholder `[".sv": "timestamp"]`, which the server
/// replaces with its own clock's time in milliseconds when it applies the write; a date becomes its
/// whole milliseconds since 1970 (`Int(date.timeIntervalSince1970 * 1000)`). Decoded, a number of
/// milliseconds since 1970 becomes a date, and null becomes nil.
///
/// Used with a `Codable` type:
///
/// ```swift
/// struct Message: Codable {
///     var text: String
///     @ServerTimestamp var sentAt: Date?
/// }
/// ```
///
/// Unlike `JSONEncoder` output, the numbers are milliseconds rather than the date strategies' forms:
/// this is the database's timestamp format, whatever the coders' date strategy.
@propertyWrapper
public struct ServerTimestamp: Codable, Equatable, Hashable, Sendable {
    /// The date; nil until the server has set it.
    public var wrappedValue: Date?

    /// A timestamp holding `value`; nil asks the server for its time on the next write.
    public init(wrappedValue value: Date?) {
        wrappedValue = value
    }

    private enum PlaceholderKey: String, CodingKey {
        case serverValue = ".sv"
    }

    /// Reads null as nil and a number as milliseconds since 1970.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            wrappedValue = nil
        } else {
            wrappedValue = Date(timeIntervalSince1970: try container.decode(Double.self) / 1000)
        }
    }

    /// Writes nil as `[".sv": "timestamp"]` and a date as whole milliseconds since 1970.
    ///
    /// - Throws: `EncodingError.invalidValue` for a date whose milliseconds do not fit in `Int`.
    public func encode(to encoder: any Encoder) throws {
        guard let date = wrappedValue else {
            var container = encoder.container(keyedBy: PlaceholderKey.self)
            try container.encode("timestamp", forKey: .serverValue)
            return
        }
        // Truncated toward zero, as `Int(_:)` does, but checked rather than trapping on huge dates.
        guard let milliseconds = Int(exactly: (date.timeIntervalSince1970 * 1000).rounded(.towardZero)) else {
            throw EncodingError.invalidValue(
                date, .init(codingPath: encoder.codingPath, debugDescription: "\(date) is out of range for a timestamp in milliseconds."))
        }
        var container = encoder.singleValueContainer()
        try container.encode(milliseconds)
    }
}

extension KeyedDecodingContainer {
    /// A ``ServerTimestamp`` that is nil when `key` is absent or null, rather than a `keyNotFound` error.
    ///
    /// Synthesized `init(from:)` implementations decode a wrapped property with `decode(_:forKey:)`,
    /// which would throw for a missing key; the database never stores nulls, so a timestamp not yet
    /// set is simply missing. This overload, more specific than the generic one, is picked instead.
    public func decode(_ type: ServerTimestamp.Type, forKey key: Key) throws -> ServerTimestamp {
        try decodeIfPresent(type, forKey: key) ?? ServerTimestamp(wrappedValue: nil)
    }
}
