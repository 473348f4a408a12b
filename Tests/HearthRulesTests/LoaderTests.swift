import HearthCore
import Testing
@testable import HearthRules

struct LoaderTests {
    func error(_ source: String) -> RulesError? {
        do {
            _ = try RuleSet(source: source)
            return nil
        } catch {
            return error
        }
    }

    @Test func acceptsCommentsAndMultilineStrings() throws {
        let source = """
            // Hearth rules
            {
              /* everything below is public */
              "rules": {
                ".read": "auth != null &&
                          auth.uid == 'x'",   // a multi-line expression
                ".write": false
              }
            }
            """
        #expect(throws: Never.self) { try RuleSet(source: source) }
    }

    @Test func unknownPropertyHasItsPosition() throws {
        let e = try #require(error("{\n  \"rules\": {\n    \".red\": true\n  }\n}"))
        #expect(e.line == 3)
        #expect(e.column == 5)
        #expect(e.text == ".red")
    }

    @Test func expressionErrorPointsIntoTheString() throws {
        let e = try #require(error("{\"rules\": {\n  \".read\": \"auth != null && skies == 'blue'\"}}"))
        #expect(e.line == 2)
        // `skies` starts 26 scalars into the expression, which opens at column 12.
        #expect(e.column == 12 + 1 + 16)
        #expect(e.text == "skies")
        #expect(e.message.contains("Unknown variable"))
    }

    @Test func badJSONHasItsPosition() throws {
        let e = try #require(error("{\"rules\": {\".read\": true,,}}"))
        #expect(e.line == 1)
        #expect(e.column == 26)
    }

    @Test(arguments: [
        #"{"rules": {".read": true}, "other": 1}"#,
        #"{"notrules": {}}"#,
        #"[]"#,
        #"{"rules": {"a": true}}"#,
        #"{"rules": {".read": 1}}"#,
        #"{"rules": {".indexOn": 5}}"#,
        #"{"rules": {".indexOn": ["a", 1]}}"#,
        #"{"rules": {"$a": {}, "$b": {}}}"#,
        #"{"rules": {"$a": {"$a": {}}}}"#,
        #"{"rules": {"a#b": {}}}"#,
        #"{"rules": {".read": true, ".read": false}}"#,
        #"{"rules": {".read": ""}}"#,
        #"{"rules": {".read": "newData.exists()"}}"#,
        #"{"rules": {"$": {}}}"#,
        #"{"rules": {} /* unterminated"#,
    ])
    func rejects(_ source: String) {
        #expect(error(source) != nil)
    }

    @Test func capturesAreScopedToTheirSubtree() {
        #expect(error(#"{"rules": {"$a": {".read": "$a == 'x'"}, "b": {".read": "$a == 'x'"}}}"#) != nil)
        #expect(error(#"{"rules": {"$a": {"b": {".read": "$a == 'x'"}}}}"#) == nil)
    }

    @Test func sourceIsKept() throws {
        let source = #"{"rules": {".read": true} /* c */}"#
        #expect(try RuleSet(source: source).source == source)
    }

    @Test func oversizedSourceIsRejected() {
        let big = "{\"rules\": {}}" + String(repeating: " ", count: RulesLimits.maxSourceBytes)
        #expect(error(big) != nil)
    }
}

extension LoaderTests {
    @Test func onlyAnUnconditionalRootWriteWithoutValidationAllowsEveryWrite() throws {
        #expect(RuleSet.open.allowsEveryWrite)
        #expect(try RuleSet(source: #"{"rules": {".write": "true", "a": {".read": "auth != null"}}}"#).allowsEveryWrite)
        #expect(!RuleSet.locked.allowsEveryWrite)
        #expect(!(try RuleSet(source: #"{"rules": {".write": true, "a": {"$b": {".validate": "newData.isNumber()"}}}}"#).allowsEveryWrite))
        #expect(!(try RuleSet(source: #"{"rules": {".write": "auth != null"}}"#).allowsEveryWrite))
        #expect(!(try RuleSet(source: #"{"rules": {"a": {".write": true}}}"#).allowsEveryWrite))
    }
}
