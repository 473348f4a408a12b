import Foundation

/// Bolt's samples and compiler cases, in the team's shared test data beside the package at
/// `<package root>/../shared/testdata/bolt` (see its README.md). The package root is found from this
/// file's path so the tests run from any working directory.
enum BoltTestData {
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/testdata/bolt")

    static var isAvailable: Bool {
        FileManager.default.fileExists(atPath: directory.appendingPathComponent("compiler-cases.json").path)
    }

    static let skipReason: Comment = "Bolt test data not found at <package root>/../shared/testdata/bolt"

    /// Sample names (`chat`, `mail`, ...) that have both a `.bolt` and a `.json` file.
    static let sampleNames: [String] = {
        let folder = directory.appendingPathComponent("samples").path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasSuffix(".bolt") }.map { String($0.dropLast(5)) }
            .filter { names.contains($0 + ".json") }.sorted()
    }()

    static func sample(_ name: String, _ ext: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent("samples/\(name).\(ext)"), encoding: .utf8)
    }

    /// The cases of `compiler-cases.json`, each a JSON object with at least `id`, `kind` and `bolt`.
    static let cases: [CompilerCase] = {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("compiler-cases.json")),
            let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let list = root["cases"] as? [[String: Any]]
        else { return [] }
        return list.map(CompilerCase.init)
    }()
}

/// One entry of `compiler-cases.json`.
struct CompilerCase: CustomTestStringConvertible, Sendable {
    let id: String
    let kind: String
    let bolt: String
    /// The whole entry re-encoded, so the case stays `Sendable`.
    let fieldsJSON: Data

    init(_ fields: [String: Any]) {
        id = fields["id"] as? String ?? "?"
        kind = fields["kind"] as? String ?? "?"
        bolt = fields["bolt"] as? String ?? ""
        fieldsJSON = (try? JSONSerialization.data(withJSONObject: fields)) ?? Data()
    }

    var fields: [String: Any] { (try? JSONSerialization.jsonObject(with: fieldsJSON) as? [String: Any]) ?? [:] }

    var testDescription: String { "\(id) (\(kind))" }
}

import Testing

/// Deep JSON equality of two JSON texts or parsed values (object key order is not significant).
func jsonEqual(_ a: Any, _ b: Any) -> Bool {
    switch (a, b) {
    case (let x as [String: Any], let y as [String: Any]):
        return x.count == y.count && x.allSatisfy { key, value in y[key].map { jsonEqual(value, $0) } ?? false }
    case (let x as [Any], let y as [Any]):
        return x.count == y.count && zip(x, y).allSatisfy { jsonEqual($0, $1) }
    case (let x as String, let y as String):
        return x == y
    case (let x as NSNumber, let y as NSNumber):
        return x == y
    case (is NSNull, is NSNull):
        return true
    default:
        return false
    }
}

func parseJSON(_ text: String) throws -> Any {
    try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
}

/// Whether `message` matches the case's `messagePattern` (with `patternFlags`, where `i` ignores case).
func matches(_ message: String, pattern: String, flags: String) throws -> Bool {
    var regex = try Regex(pattern)
    if flags.contains("i") { regex = regex.ignoresCase() }
    return message.contains(regex)
}
