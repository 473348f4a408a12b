import Foundation

extension UserRecord {
    /// The record as account stores keep it: one JSON text per account, its `Codable` form. New fields
    /// are optional, so records written by older versions decode.
    public func storedJSON() throws -> String {
        String(decoding: try JSONEncoder().encode(self), as: UTF8.self)
    }

    /// A record from ``storedJSON()``'s text.
    ///
    /// - Throws: `DecodingError` when the text is not a record (a damaged or hand-edited row).
    public init(storedJSON text: String) throws {
        self = try JSONDecoder().decode(UserRecord.self, from: Data(text.utf8))
    }
}
