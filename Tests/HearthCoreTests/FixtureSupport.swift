import Foundation
import Testing
@testable import HearthCore
import HearthTesting

/// Reads the language-neutral fixtures in `Tests/Fixtures`.
///
/// Fixture files are decoded with Foundation's `JSONDecoder`, not with HearthCore's parser, so a
/// parser bug cannot hide in the fixture reader. Values that stand for database data are turned
/// back into JSON text and handed to `Node(json:)`, the path every client payload takes.
enum Fixtures {
    /// `Tests/Fixtures`, found from this source file so tests run from any working directory.
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    /// Decodes one fixture file, relative to `Tests/Fixtures`.
    static func load<T: Decodable>(_ type: T.Type, _ relativePath: String) -> T? {
        let url = directory.appendingPathComponent(relativePath)
        do {
            return try JSONDecoder().decode(T.self, from: Data(contentsOf: url))
        } catch {
            Issue.record("cannot read \(url.path): \(error)")
            return nil
        }
    }

    /// The `.json` files of a fixture folder, sorted by name.
    static func files(in folder: String) -> [String] {
        let url = directory.appendingPathComponent(folder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().map { "\(folder)/\($0)" }
    }

    /// Every case of every file in `folder`, each tagged with its file, for `@Test(arguments:)`.
    static func cases<Case: NamedCase>(_ type: Case.Type, in folder: String) -> [Located<Case>] {
        files(in: folder).flatMap { file in
            (load(CaseFile<Case>.self, file)?.cases ?? []).map { Located(file: file, value: $0) }
        }
    }
}

/// A fixture file: a `comment` for people and the `cases`.
struct CaseFile<Case: Decodable>: Decodable {
    let comment: String?
    let cases: [Case]
}

/// A case with the file it came from, so a failing argument names both.
struct Located<Case: Sendable & NamedCase>: Sendable, CustomTestStringConvertible {
    let file: String
    let value: Case
    var testDescription: String { "\(file): \(value.name)" }
}

/// Every fixture case has a sentence `name`.
protocol NamedCase: Decodable, Sendable {
    var name: String { get }
}

extension FixtureJSON {
    /// The node this (export-form) value stands for, read by HearthCore's JSON parser.
    var node: Node {
        get throws { try Node(json: jsonText) }
    }

    var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }
}

/// An expected or actual event, compared by type, key and previous key.
struct EventRecord: Equatable, CustomStringConvertible {
    var type: String
    var key: String?
    var previousKey: String?

    init(type: String, key: String?, previousKey: String?) {
        self.type = type
        self.key = key
        self.previousKey = previousKey
    }

    init(_ event: Event) {
        self.init(type: event.type.rawValue, key: event.key?.string, previousKey: event.previousKey?.string)
    }

    var description: String {
        var text = type
        if let key { text += " \(key)" }
        if type != "value" && type != "child_removed" { text += " after \(previousKey ?? "null")" }
        return text
    }
}
