import Testing

@testable import HearthBolt

/// Hostile input ends in an error, not a crashed stack or exhausted memory (BoltLimits).
@Suite struct BoltLimitTests {
    private func message(_ source: String) -> String? {
        do {
            _ = try BoltCompiler.compile(source: source)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func deepParenthesesAreRejected() {
        let depth = 100_000
        let source = "f() { " + String(repeating: "(", count: depth) + "1" + String(repeating: ")", count: depth) + " } path / {}"
        #expect(message(source)?.contains("Nesting deeper than") == true)
    }

    @Test func longOperatorChainsAreRejected() {
        let source = "f() { 1" + String(repeating: " + 1", count: 5_000) + " } path / {}"
        #expect(message(source)?.contains("Expression deeper than") == true)
    }

    @Test func deepPathNestingIsRejected() {
        let source = "path /a " + String(repeating: "{ /a ", count: 1_000) + String(repeating: "}", count: 1_001)
        #expect(message(source)?.contains("Nesting deeper than") == true)
    }

    @Test func exponentialFunctionExpansionIsStopped() {
        var source = "f0(x) { x == 1 }\n"
        for level in 1...40 { source += "f\(level)(x) { f\(level - 1)(x) && f\(level - 1)(x) }\n" }
        source += "path / { read() { f40(auth.uid) } }"
        #expect(message(source)?.contains("Expanding functions took more than") == true)
    }

    @Test func deeplyNestedTypesAreRejected() {
        var source = "path / is T0;\n"
        for level in 0..<300 { source += "type T\(level) { next: T\(level + 1) }\n" }
        source += "type T300 { leaf: String }"
        #expect(message(source)?.contains("Types nest deeper than") == true)
    }

    @Test func moderateNestingStillCompiles() throws {
        let depth = 100
        let source = "path / { read() { " + String(repeating: "(", count: depth) + "true" + String(repeating: ")", count: depth) + " } }"
        #expect(try BoltCompiler.compile(source: source).contains("\".read\": \"true\""))
    }

    /// `type T0 {a: T1, b: T1}`, `type T1 {a: T2, b: T2}`, …: a few hundred bytes that expand to 2^n
    /// locations (19 levels took gigabytes before the budget).
    static func doubling(_ levels: Int) -> String {
        var source = "path /x is T0;\n"
        for level in 0..<levels { source += "type T\(level) { a: T\(level + 1), b: T\(level + 1) }\n" }
        return source + "type T\(levels) extends String {}\n"
    }

    @Test func typesThatDoubleAtEachLevelAreRejected() {
        #expect(message(Self.doubling(8)) == nil)
        #expect(message(Self.doubling(40))?.contains("rule locations") == true)
    }

    @Test func manyPathsOfALargeTypeAreRejected() {
        var source = Self.doubling(12)
        for index in 0..<200 { source += "path /p\(index) is T0;\n" }
        #expect(message(source)?.contains("rule locations") == true)
    }

    @Test func oversizedSourcesAreRejected() {
        let source = "path /x {}\n" + String(repeating: "// padding\n", count: 30_000)
        #expect(message(source)?.contains("larger than") == true)
    }
}
