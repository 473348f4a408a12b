import Foundation
import HearthCore
import Testing

/// The team's shared rules test data at `<package root>/../shared/testdata` (see
/// shared/testdata/rules/README.md), found from this file's path so tests run from any directory.
enum SharedTestData {
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/testdata")

    static func url(_ relativePath: String) -> URL { directory.appendingPathComponent(relativePath) }

    static var isAvailable: Bool {
        FileManager.default.fileExists(atPath: url("rules/targaryen-live-fixtures.json").path)
    }

    /// A fixture file decoded with Foundation (not HearthCore's parser, so a parser bug cannot
    /// hide in the fixture reader).
    static func object(_ relativePath: String) throws -> [String: Any] {
        let data = try Data(contentsOf: url(relativePath))
        return try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) as! [String: Any]
    }

    static func text(_ relativePath: String) throws -> String {
        try String(contentsOf: url(relativePath), encoding: .utf8)
    }
}

/// JSON text for a Foundation value, and the `Node` a client sending it would produce.
func jsonText(_ value: Any?) throws -> String {
    guard let value, !(value is NSNull) else { return "null" }
    let data = try JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys])
    return String(decoding: data, as: UTF8.self)
}

func node(_ value: Any?) throws -> Node {
    try Node(json: try jsonText(value))
}
