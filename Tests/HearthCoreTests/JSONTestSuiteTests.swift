import Foundation
import Testing
@testable import HearthCore

/// Nicolas Seriot's JSONTestSuite, checked out beside the package at
/// `<package root>/../shared/testdata/json` (the team's shared test data). The package root is
/// found from this file's path so the suite runs from any working directory.
enum JSONTestSuite {
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/testdata/json")

    static var isAvailable: Bool {
        FileManager.default.fileExists(atPath: directory.appendingPathComponent("test_parsing").path)
    }

    static func files(_ folder: String, prefix: String) -> [String] {
        let path = directory.appendingPathComponent(folder).path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.filter { $0.hasPrefix(prefix) && $0.hasSuffix(".json") }.sorted()
    }

    static func bytes(_ folder: String, _ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(folder).appendingPathComponent(name)))
    }
}

// Skipped, with this reason shown by the runner, when the shared test data is not checked out.
@Suite(.enabled(if: JSONTestSuite.isAvailable, "JSONTestSuite not found at <package root>/../shared/testdata/json"))
struct JSONTestSuiteTests {
    @Test func acceptsEveryYesCase() throws {
        let names = JSONTestSuite.files("test_parsing", prefix: "y_")
        #expect(names.count > 90)
        for name in names {
            let bytes = try JSONTestSuite.bytes("test_parsing", name)
            #expect(throws: Never.self, "\(name)") { try Node(jsonBytes: bytes) }
        }
    }

    @Test func rejectsEveryNoCaseWithAnOffset() throws {
        let names = JSONTestSuite.files("test_parsing", prefix: "n_")
        #expect(names.count > 180)
        for name in names {
            let bytes = try JSONTestSuite.bytes("test_parsing", name)
            do {
                _ = try Node(jsonBytes: bytes)
                Issue.record("\(name) was accepted")
            } catch {
                #expect(error.code == .invalidJSON, "\(name): \(error)")
                let offset = try #require(error.byteOffset, "\(name)")
                #expect(offset >= 0 && offset <= bytes.count, "\(name): \(offset)")
            }
        }
    }

    /// Implementation-defined cases: either outcome is fine, but never a crash, and a rejection
    /// is always a syntax error with an offset.
    @Test func survivesEveryImplementationDefinedCase() throws {
        for name in JSONTestSuite.files("test_parsing", prefix: "i_") {
            let bytes = try JSONTestSuite.bytes("test_parsing", name)
            do {
                _ = try Node(jsonBytes: bytes)
            } catch {
                #expect(error.byteOffset != nil, "\(name)")
            }
        }
    }

    /// test_transform: inputs where parsers differ in what they produce. The expected values are
    /// Hearth's decisions, documented on `JSONParser`.
    @Test(arguments: [
        ("number_-9223372036854775808.json", #"{"0":-9223372036854775808}"#),
        ("number_-9223372036854775809.json", #"{"0":-9223372036854776000}"#),
        ("number_1.0.json", #"{"0":1}"#),
        ("number_1.000000000000000005.json", #"{"0":1}"#),
        ("number_1000000000000000.json", #"{"0":1000000000000000}"#),
        ("number_10000000000000000999.json", #"{"0":10000000000000000000}"#),
        ("number_1e-999.json", #"{"0":0}"#),
        ("number_1e6.json", #"{"0":1000000}"#),
        ("number_9223372036854775807.json", #"{"0":9223372036854775807}"#),
        ("number_9223372036854775808.json", #"{"0":9223372036854776000}"#),
        ("object_key_nfc_nfd.json", "{\"e\u{301}\":\"NFD\",\"\u{E9}\":\"NFC\"}"),
        ("object_key_nfd_nfc.json", "{\"e\u{301}\":\"NFD\",\"\u{E9}\":\"NFC\"}"),
        ("object_same_key_different_values.json", #"{"a":2}"#),
        ("object_same_key_same_value.json", #"{"a":1}"#),
        ("object_same_key_unclear_values.json", #"{"a":0}"#),
        ("string_with_escaped_NULL.json", #"{"0":"A\u0000B"}"#),
        ("string_1_escaped_invalid_codepoint.json", nil),
        ("string_1_invalid_codepoint.json", nil),
        ("string_2_escaped_invalid_codepoints.json", nil),
        ("string_2_invalid_codepoints.json", nil),
        ("string_3_escaped_invalid_codepoints.json", nil),
        ("string_3_invalid_codepoints.json", nil),
    ] as [(String, String?)])
    func transformCases(name: String, expected: String?) throws {
        let bytes = try JSONTestSuite.bytes("test_transform", name)
        do {
            let node = try Node(jsonBytes: bytes)
            #expect(node.json(.export) == expected, "\(name)")
        } catch {
            // nil: rejected (lone surrogates and invalid UTF-8 are errors, never replaced).
            #expect(expected == nil, "\(name): \(error)")
            #expect(error.byteOffset != nil)
        }
    }
}
