import Testing

@testable import HearthBolt

/// The 202 cases extracted from Bolt's own test tables (`compiler-cases.json`, kinds described in the
/// shared README): whole outputs, single rules, errors and warnings, parser shapes and printer round trips.
@Suite(.enabled(if: BoltTestData.isAvailable, BoltTestData.skipReason))
struct BoltCompilerCaseTests {
    @Test func allCasesArePresent() {
        #expect(BoltTestData.cases.count == 202)
    }

    @Test("Compiler case holds", arguments: BoltTestData.cases)
    func compilerCaseHolds(_ testCase: CompilerCase) throws {
        let fields = testCase.fields
        switch testCase.kind {
        case "compile":
            let output = try BoltCompiler.compile(source: testCase.bolt)
            #expect(jsonEqual(try parseJSON(output), fields["expect"]!), "\(output)")

        case "compile-rule":
            let output = try parseJSON(try BoltCompiler.compile(source: testCase.bolt))
            var value: Any? = output
            for key in fields["rulePath"] as! [String] { value = (value as? [String: Any])?[key] }
            #expect(value as? String == fields["expect"] as? String)

        case "compile-error":
            let error = #expect(throws: BoltError.self) { try BoltCompiler.compile(source: testCase.bolt) }
            if let error { try expectMatch(error.message, fields) }

        case "parse-error":
            let error = #expect(throws: BoltError.self) { try Parser.parse(testCase.bolt) }
            #expect(error?.stage == .parse)
            if let error { try expectMatch(error.message, fields) }

        case "compile-warning":
            let output = try BoltCompiler.compileWithWarnings(source: testCase.bolt)
            try expectMatch(output.warnings.last?.message ?? "(no warning)", fields)

        case "parse-warning":
            let (_, warnings) = try Parser.parse(testCase.bolt)
            try expectMatch(warnings.last?.message ?? "(no warning)", fields)

        case "parse-path-template":
            let (program, _) = try Parser.parse(testCase.bolt)
            let path = try #require(program.paths.first)
            #expect(path.labels == fields["expectLabels"] as? [String])
            #expect(path.parts.compactMap(\.variable) == [fields["expectCaptureVariable"] as? String])

        case "parse-function-body":
            let (program, _) = try Parser.parse(testCase.bolt)
            let function = try #require(program.functions[fields["function"] as! String])
            #expect(function.body.rulesText == fields["expectDecoded"] as? String)

        case "parse-method-body":
            let (program, _) = try Parser.parse(testCase.bolt)
            let schema = try #require(program.schemas[fields["type"] as! String])
            let method = try #require(schema.methods[fields["method"] as! String])
            #expect(method.body.rulesText == fields["expectDecoded"] as? String)

        case "parse-type":
            let (program, _) = try Parser.parse(testCase.bolt)
            let schema = try #require(program.schemas[fields["type"] as! String])
            let expect = fields["expect"] as! [String: Any]
            #expect(schema.derivedFrom.description == expect["derivedFrom"] as? String)
            #expect(schema.properties.count == (expect["properties"] as? [String: Any])?.count)
            #expect(schema.methods.names.count == (expect["methods"] as? [String: Any])?.count)
            #expect(schema.parameters == expect["params"] as? [String])

        case "expression-roundtrip":
            let (program, _) = try Parser.parse(testCase.bolt)
            let function = try #require(program.functions["f"])
            #expect(function.body.rulesText == fields["expectDecoded"] as? String)

        default:
            Issue.record("Unknown case kind \(testCase.kind)")
        }
    }

    private func expectMatch(_ message: String, _ fields: [String: Any]) throws {
        let pattern = fields["messagePattern"] as! String
        let flags = fields["patternFlags"] as? String ?? ""
        #expect(try matches(message, pattern: pattern, flags: flags), "'\(message)' does not match /\(pattern)/\(flags)")
    }
}
