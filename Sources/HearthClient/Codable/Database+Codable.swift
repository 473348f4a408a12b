import Foundation

extension Database {
    /// The encoder `setValue(from:)` uses (Firebase's name for it).
    public typealias Encoder = FirebaseDataEncoder
    /// The decoder `data(as:)` uses.
    public typealias Decoder = FirebaseDataDecoder
}

extension DataSnapshot {
    /// The snapshot's value decoded as `type`: nothing there decodes as nil for an optional type and
    /// fails with `DecodingError.valueNotFound` otherwise.
    ///
    ///     struct Joke: Codable { var text: String; var votes: Int }
    ///     let joke = try snapshot.data(as: Joke.self)
    public func data<T: Decodable>(as type: T.Type, decoder: Database.Decoder = Database.Decoder()) throws -> T {
        try decoder.decode(type, from: value ?? NSNull())
    }
}

extension DatabaseReference {
    /// Writes `value` encoded with `encoder` (a struct becomes an object, `@ServerTimestamp` nil the
    /// server's time). Encoding errors are thrown here; the write's own outcome goes to `completion`.
    public func setValue<T: Encodable>(
        from value: T, encoder: Database.Encoder = Database.Encoder(), completion: (@Sendable (Error?) -> Void)? = nil
    ) throws {
        let encoded = try encoder.encode(value)
        if let completion {
            setValue(encoded) { error, _ in completion(error) }
        } else {
            setValue(encoded)
        }
    }
}
