import Testing
@testable import HearthRules

/// Parses and prints back with full parentheses, so precedence and associativity are visible.
func shape(_ text: String) throws -> String {
    func show(_ e: Expression) -> String {
        switch e {
        case .null: return "null"
        case .boolean(let b, _): return "\(b)"
        case .number(let n, _): return JSNumber.string(n)
        case .string(let s, _): return "'\(s)'"
        case .regex(let p, let f, _): return "/\(p)/\(f)"
        case .array(let items, _): return "[" + items.map(show).joined(separator: ", ") + "]"
        case .variable(let name, _): return name
        case .member(let o, let name, _): return "\(show(o)).\(name)"
        case .index(let o, let k, _): return "\(show(o))[\(show(k))]"
        case .call(let c, let args, _): return "\(show(c))(" + args.map(show).joined(separator: ", ") + ")"
        case .unary(let op, let x, _): return "(\(op.rawValue)\(show(x)))"
        case .binary(let op, let a, let b, _): return "(\(show(a)) \(op.rawValue) \(show(b)))"
        case .conditional(let c, let a, let b, _): return "(\(show(c)) ? \(show(a)) : \(show(b)))"
        }
    }
    return show(try Parser.parse(Array(text.unicodeScalars)))
}

struct ParserTests {
    @Test func precedenceFollowsTheSpec() throws {
        #expect(try shape("1 + 2 * 3 - 4") == "((1 + (2 * 3)) - 4)")
        #expect(try shape("a || b && c") == "(a || (b && c))")
        #expect(try shape("a == b && c < d") == "((a == b) && (c < d))")
        #expect(try shape("1 < 2 == true") == "((1 < 2) == true)")
        #expect(try shape("!a && -b < c") == "((!a) && ((-b) < c))")
        #expect(try shape("a === b") == "(a == b)")
        #expect(try shape("a !== b") == "(a != b)")
    }

    @Test func binaryOperatorsAreLeftAssociative() throws {
        #expect(try shape("8 - 4 - 2") == "((8 - 4) - 2)")
        #expect(try shape("8 / 4 / 2") == "((8 / 4) / 2)")
    }

    @Test func conditionalIsRightAssociative() throws {
        #expect(try shape("a ? b : c ? d : e") == "(a ? b : (c ? d : e))")
        #expect(try shape("a || b ? c : d") == "((a || b) ? c : d)")
    }

    @Test func postfixChains() throws {
        #expect(try shape("root.child('a').val()") == "root.child('a').val()")
        #expect(try shape("auth.foo[$bar]") == "auth.foo[$bar]")
        #expect(try shape("data.hasChildren(['a', 'b'])") == "data.hasChildren(['a', 'b'])")
        #expect(try shape("-x.y") == "(-x.y)")
    }

    @Test(arguments: ["", "a +", "(a", "a b", "var foo = 8", "a ? b", "+a", "f(,)", "a.", "a.1"])
    func rejectsMalformedExpressions(_ text: String) {
        #expect(throws: ExpressionError.self) { try Parser.parse(Array(text.unicodeScalars)) }
    }

    @Test func depthIsBounded() {
        let deep = String(repeating: "(", count: 300) + "true" + String(repeating: ")", count: 300)
        #expect(throws: ExpressionError.self) { try Parser.parse(Array(deep.unicodeScalars)) }
        let long = Array(repeating: "true", count: 300).joined(separator: " && ")
        #expect(throws: ExpressionError.self) { try Parser.parse(Array(long.unicodeScalars)) }
        let fine = Array(repeating: "true", count: 100).joined(separator: " && ")
        #expect(throws: Never.self) { try Parser.parse(Array(fine.unicodeScalars)) }
    }
}
