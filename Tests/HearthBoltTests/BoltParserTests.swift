import Testing

@testable import HearthBolt

private func parse(_ source: String) throws -> BoltProgram { try Parser.parse(source).program }

private func parseError(_ source: String) -> BoltError? {
    do {
        _ = try Parser.parse(source)
        return nil
    } catch {
        return error
    }
}

private func compileError(_ source: String) -> BoltError? {
    do {
        _ = try BoltCompiler.compile(source: source)
        return nil
    } catch {
        return error
    }
}

@Suite struct BoltParserTests {
    @Test func nestedPathsAreFlattenedWithTheirCaptures() throws {
        let program = try parse("path /users/{uid} { read() { true } /posts/{post=*} is String; path /x {} }")
        #expect(program.paths.map(\.labels) == [["users", "$uid"], ["users", "$uid", "posts", "$post"], ["users", "$uid", "x"]])
        #expect(program.paths[1].scope == ["uid": .literal("$uid"), "post": .literal("$post")])
        #expect(program.paths[1].type == .simple("String"))
        #expect(program.paths[0].methods["read"]?.body == .true)
    }

    @Test func rootPathHasNoLabels() throws {
        #expect(try parse("path / is Any;").paths[0].labels == [])
    }

    @Test func typeExpressionsCoverGenericsArraysAndUnions() throws {
        let program = try parse("type T<X> extends Map<String, X[]> | Null; path / is T<Number>;")
        let schema = try #require(program.schemas["T"])
        #expect(schema.parameters == ["X"])
        #expect(schema.derivedFrom.description == "Map<String, Map<String, X>> | Null")
        #expect(program.paths[0].type == .generic("T", [.simple("Number")]))
    }

    @Test func typeMembersAcceptQuotedNamesSeparatorsAndMethods() throws {
        let program = try parse("type T { 'a b': String, c: Number; validate() { this.c > 0 } d: Boolean } path / is T;")
        let schema = try #require(program.schemas["T"])
        #expect(schema.properties.map(\.name) == ["a b", "c", "d"])
        #expect(schema.methods.names == ["validate"])
        #expect(schema.derivedFrom == .simple("Object"))
    }

    @Test func precedenceFollowsJavaScript() throws {
        let body = try #require(try parse("f() { a || b && !c == d + e * -f ? g : h }").functions["f"]).body
        #expect(body.rulesText == "(a || (b && !c == d + e * -f)) ? g : h")
    }

    @Test func wordOperatorsAndStrictEqualityAreAliases() throws {
        let body = try #require(try parse("f() { a === b and c !== d or e }").functions["f"]).body
        #expect(body.rulesText == "((a == b && c != d) || e)")
    }

    @Test func parseErrorsCarryLineAndColumn() {
        let error = parseError("path /x {\n  read() { a = b }\n}")
        #expect(error?.stage == .parse)
        #expect(error?.location == SourceLocation(line: 2, column: 14))
        #expect(error?.description.hasPrefix("2:14: Equality operator") == true)
    }

    @Test func straySeparatorsAreWarnings() throws {
        let (program, warnings) = try Parser.parse("type T {};\npath /a { /b {}; read() { true } };")
        #expect(program.paths.count == 2)
        #expect(warnings.map(\.location) == [SourceLocation(line: 1, column: 10), SourceLocation(line: 2, column: 16), SourceLocation(line: 2, column: 35)])
        #expect(warnings.allSatisfy { $0.message.hasPrefix("Extra separator") })
    }

    @Test func missingClosingBraceIsReported() {
        #expect(parseError("path /x { read() { true }")?.message.contains("Missing '}'") == true)
    }

    @Test func duplicateDefinitionsAreErrors() {
        #expect(parseError("f() { 1 } f() { 2 }")?.message.contains("Duplicated function") == true)
        #expect(parseError("type A {} type A {}")?.message.contains("Duplicated type") == true)
        #expect(parseError("path / { read() { true } read() { false } }")?.message.contains("Duplicated method") == true)
    }

    @Test func generationErrorsPointAtTheCall() {
        let error = compileError("path /x {\n  write() { isOwner() }\n}")
        #expect(error?.stage == .generate)
        #expect(error?.message == "Undefined function: isOwner")
        #expect(error?.location == SourceLocation(line: 2, column: 13))
    }

    @Test func unknownTypeErrorPointsAtThePath() {
        let error = compileError("\n\npath /x is Nope;")
        #expect(error?.location?.line == 3)
        #expect(error?.message == "No type definition for: Nope")
    }

    @Test func wrongArgumentCountIsAnError() {
        #expect(compileError("f(a) { a } path / { read() { f(1, 2) } }")?.message.contains("Incorrect number of function arguments") == true)
    }

    @Test func missingPathHasNoLocation() {
        let error = compileError("type T {}")
        #expect(error?.location == nil)
        #expect(error?.description == "Must have at least one path expression.")
    }
}

@Suite struct BoltGeneratorTests {
    private func compileError(_ source: String) -> BoltError? {
        do {
            _ = try BoltCompiler.compile(source: source)
            return nil
        } catch {
            return error
        }
    }

    private func rules(_ source: String) throws -> RulesJSON? {
        try BoltCompiler.compileToTree(source: source).0["rules"]
    }

    @Test func keyReturnsTheLastSegment() throws {
        let output = try rules("path /a/{id} { validate() { key() == 'x' } } path /b { validate() { key() == 'b' } }")
        #expect(output?["a"]?["$id"]?[".validate"] == .string("$id == 'x'"))
        #expect(output?["b"]?[".validate"] == .string("'b' == 'b'"))
    }

    @Test func rootInWriteRulesClimbsFromNewData() throws {
        let output = try rules("path /a/b { write() { root.x == 1 } read() { root.x == 1 } }")
        #expect(output?["a"]?["b"]?[".write"] == .string("newData.parent().parent().child('x').val() == 1"))
        #expect(output?["a"]?["b"]?[".read"] == .string("root.child('x').val() == 1"))
    }

    @Test func sharedMapTypesShareOneKeyName() throws {
        let output = try rules("type T { a: Number[], b: Map<String, Number>, c: Boolean[] } path / is T;")
        #expect(output?["a"]?["$key1"] != nil)
        #expect(output?["b"]?["$key1"] != nil)
        #expect(output?["c"]?["$key2"] != nil)
    }

    /// As in Bolt, a function body sees only its parameters: `this` and captures must be passed in.
    @Test func functionsDoNotSeeThisOrCapturesAndSayWhy() throws {
        let output = try BoltCompiler.compileWithWarnings(source: "isNew() { prior(this) == null }\npath /a/{id} { write() { isNew() } validate() { id == 'x' } }")
        #expect(output.json.contains("\".write\": \"this == null\""))
        #expect(output.json.contains("\".validate\": \"$id == 'x'\""))
        #expect(output.warnings.map(\.message) == ["Unknown variable 'this' at /a/$id is copied into the rules as written; Firebase rejects rules that use it"])
        #expect(output.warnings.first?.location == SourceLocation(line: 1, column: 17))
    }

    @Test func indexAcceptsASingleString() throws {
        #expect(try rules("path /x { index() { 'a' } }")?["x"]?[".indexOn"] == .strings(["a"]))
    }

    @Test func unsupportedMethodIsAWarningAndIgnored() throws {
        let output = try BoltCompiler.compileWithWarnings(source: "type T { foo() { true } } path / is T { read() { true } }")
        #expect(output.warnings.map(\.message) == [
            "Unsupported method name in type statement: 'foo' (allowed: 'validate', 'read', 'write', 'create', 'update', 'delete')"
        ])
        #expect(!output.json.contains("foo"))
    }

    @Test func recursiveTypesAreAnErrorNotALoop() {
        let error = compileError("type T { next: T | Null } path / is T;")
        #expect(error?.message.hasPrefix("Recursive type definition: T contains itself") == true)
        #expect(compileError("type A extends B; type B extends A; path / is A;")?.message.contains("Recursive type") == true)
    }

    @Test func cyclicExtendsIsRejectedNotLooping() {
        #expect(throws: BoltError.self) { try BoltCompiler.compile(source: "type A extends B { x: Number } type B extends A; path / is A;") }
    }
}
