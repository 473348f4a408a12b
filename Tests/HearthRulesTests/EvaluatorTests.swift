import HearthCore
import Testing
@testable import HearthRules

/// Evaluates one expression (any type) in a context; returns the value spelled out, or "error"
/// for a runtime error. The root is `data`; `newData` defaults to the same tree.
func value(
    _ text: String, kind: RuleKind = .validate, auth: String? = nil, data: String = "null", newData: String? = nil,
    captures: [(String, String)] = [], query: RuleQuery = .plainRead, at path: Path = .root
) throws -> String {
    let expression = try Parser.parse(Array(text.unicodeScalars))
    let compiled = try ExpressionCompiler(kind: kind, captures: captures.map(\.0)).compile(expression)
    let root = try Node(json: data)
    let newRoot = try Node(json: newData ?? data)
    var context = EvaluationContext(
        auth: try auth.map { try Node(json: $0) }, now: 1234, root: root, newRoot: .node(newRoot), query: query)
    context.location = path.keys[...]
    context.data = root.child(at: path)
    context.newData = .node(newRoot.child(at: path))
    context.captures = captures.map(\.1)
    do {
        switch try compiled.evaluate(&context) {
        case .null: return "null"
        case .bool(let b): return "\(b)"
        case .number(let n): return JSNumber.string(n)
        case .string(let s): return "'\(s)'"
        case .object, .opaqueObject: return "object"
        case .snapshot(let s): return "snapshot \(Path(Array(s.keys)).slashed)"
        }
    } catch {
        return "error"
    }
}

/// True when the expression is rejected at load time.
func rejected(_ text: String, kind: RuleKind = .validate, captures: [String] = []) -> Bool {
    do {
        let expression = try Parser.parse(Array(text.unicodeScalars))
        _ = try ExpressionCompiler(kind: kind, captures: captures).compileRule(expression)
        return false
    } catch {
        return true
    }
}

struct EvaluatorTests {
    @Test func arithmeticAndConcatenation() throws {
        #expect(try value("1 + 2 * 3") == "7")
        #expect(try value("7 % 3") == "1")
        #expect(try value("-7 % 3") == "-1")
        #expect(try value("1 / 0 + ''") == "'NaN'")
        #expect(try value("0 / 0 == 0 / 0") == "false")
        #expect(try value("'a' + 1") == "'a1'")
        #expect(try value("1.5 + ''") == "'1.5'")
        #expect(try value("1e21 + ''") == "'1e+21'")
        #expect(try value("0.000001 + ''") == "'0.000001'")
        #expect(try value("1e-7 + ''") == "'1e-7'")
        #expect(try value("auth.n + 1", auth: #"{"n": 2}"#) == "3")
        #expect(try value("auth.s + 1", auth: #"{"s": "x"}"#) == "'x1'")
        #expect(try value("auth.b + 1", auth: #"{"b": true}"#) == "error")
        #expect(try value("auth.missing - 1", auth: "{}") == "error")
        #expect(try value("-auth.s", auth: #"{"s": "x"}"#) == "error")
    }

    @Test func equalityNeverConverts() throws {
        #expect(try value("5 == '5'") == "false")
        #expect(try value("null == false") == "false")
        #expect(try value("1.0 == 1") == "true")
        #expect(try value("auth == null") == "true")
        #expect(try value("auth != null", auth: #"{"uid": "a"}"#) == "true")
        #expect(try value("data.val() == data.val()", data: #"{"a": 1}"#) == "false")  // objects equal nothing
    }

    @Test func comparisonsNeedSameTypedOperands() throws {
        #expect(try value("'a' < 'b'") == "true")
        #expect(try value("'B' < 'a'") == "true")
        #expect(try value("2 >= 2") == "true")
        #expect(try value("data.val() >= 20") == "error")  // null
        #expect(try value("'one' > 1") == "error")
    }

    @Test func errorsPoisonTheWholeExpression() throws {
        #expect(try value("auth.x.length > 1 || true") == "error")
        #expect(try value("true || auth.x.length > 1") == "true")
        #expect(try value("false && auth.x.length > 1") == "false")
        #expect(try value("false ? auth.x.length > 1 : true") == "true")
    }

    @Test func memberAccessOnNullIsNull() throws {
        #expect(try value("auth.foo.bar") == "null")
        #expect(try value("auth.token.admin", auth: #"{"token": {"admin": true}}"#) == "true")
        #expect(try value("auth.foo['bar']", auth: #"{"foo": {"bar": 1}}"#) == "1")
        #expect(try value("auth.foo[$k]", auth: #"{"foo": {"bar": 1}}"#, captures: [("$k", "bar")]) == "1")
        #expect(try value("auth.contains('x')") == "error")
    }

    @Test func snapshots() throws {
        let data = #"{"users": {"ada": {"name": "Ada", "age": 36, "admin": true}}, "n": 1}"#
        #expect(try value("root.child('users/ada/name').val()", data: data) == "'Ada'")
        #expect(try value("root.child('users').child('ada').child('age').isNumber()", data: data) == "true")
        #expect(try value("root.child('users/ada').val() != null", data: data) == "true")
        #expect(try value("root.child('users/ada').isString()", data: data) == "false")
        #expect(try value("root.child('users/ada/admin').isBoolean()", data: data) == "true")
        #expect(try value("root.hasChild('users/ada')", data: data) == "true")
        #expect(try value("root.hasChild('users/bob')", data: data) == "false")
        #expect(try value("root.hasChildren()", data: data) == "true")
        #expect(try value("root.child('n').hasChildren()", data: data) == "false")
        #expect(try value("root.child('users/ada').hasChildren(['name', 'age'])", data: data) == "true")
        #expect(try value("root.child('users/ada').hasChildren(['name', 'x'])", data: data) == "false")
        #expect(try value("data.parent().parent().child('n').val()", data: data, at: "users/ada") == "1")
        #expect(try value("data.child('name').parent().parent().parent().exists()", data: data, at: "users/ada") == "true")
        #expect(try value("root.parent().exists()", data: data) == "error")
        #expect(try value("root.child(auth.uid).exists()", data: data) == "error")
        #expect(try value("root.child('missing/deep').val()", data: data) == "null")
        #expect(try value("root.child('bob@example.com').exists()", data: data) == "false")
    }

    @Test func newDataIsThePostWriteTree() throws {
        #expect(try value("newData.val()", data: #"{"a": 1}"#, newData: #"{"a": 2}"#, at: "a") == "2")
        #expect(try value("data.val()", data: #"{"a": 1}"#, newData: #"{"a": 2}"#, at: "a") == "1")
        #expect(try value("newData.parent().child('a').val()", data: "null", newData: #"{"a": 2, "b": 3}"#, at: "b") == "2")
    }

    @Test func priorities() throws {
        #expect(try value("root.child('a').getPriority()", data: #"{"a": {".value": 1, ".priority": 5}}"#) == "5")
        #expect(try value("root.child('a').getPriority()", data: #"{"a": 1}"#) == "null")
    }

    @Test func stringMethods() throws {
        #expect(try value("'hello'.length") == "5")
        #expect(try value("'héllo'.length") == "5")
        #expect(try value("'😀'.length") == "2")  // UTF-16 code units
        #expect(try value("'hello'.contains('ell')") == "true")
        #expect(try value("'hello'.beginsWith('he')") == "true")
        #expect(try value("'hello'.endsWith('lo')") == "true")
        #expect(try value("'hello'.endsWith('he')") == "false")
        #expect(try value("'a-b-c'.replace('-', '')") == "'abc'")
        #expect(try value("'Hello'.toLowerCase()") == "'hello'")
        #expect(try value("'Hello'.toUpperCase()") == "'HELLO'")
        #expect(try value("'x'['contains']('x')") == "true")
        #expect(try value("auth.s.contains(auth.n)", auth: #"{"s": "a1", "n": 1}"#) == "error")
        #expect(try value("data.val().contains('a')", data: "1") == "error")
    }

    @Test func regexSubset() throws {
        #expect(try value("'abc'.matches(/b/)") == "true")
        #expect(try value("'abc'.matches(/^b/)") == "false")
        #expect(try value("'ABC'.matches(/^abc$/i)") == "true")
        #expect(try value("'123-45-6789'.matches(/^\\d{3}-\\d{2}-\\d{4}$/)") == "true")
        #expect(try value("'123-45-67890'.matches(/^\\d{3}-\\d{2}-\\d{4}$/)") == "false")
        #expect(try value("'a.b'.matches(/a\\.b/)") == "true")
        #expect(try value("'axb'.matches(/a\\.b/)") == "false")
        #expect(try value("'foo'.matches(/^(foo|bar)$/)") == "true")
        #expect(try value("'baz'.matches(/^(foo|bar)$/)") == "false")
        #expect(try value("'x9'.matches(/^[a-z][^a-z]$/)") == "true")
        #expect(try value("'aaaa'.matches(/^a{2,3}$/)") == "false")
        #expect(try value("'aaa'.matches(/^a{2,}$/)") == "true")
        #expect(try value("' '.matches(/^\\s$/)") == "true")
        #expect(try value("'_'.matches(/^\\w$/)") == "true")
        #expect(try value("'-'.matches(/^\\W$/)") == "true")
        #expect(try value("'{foo}'.matches(/\\{foo}/)") == "true")
        #expect(try value("'`'.matches(/^[_-a]$/i)") == "true")
        #expect(try value("'B'.matches(/^[a-c]$/i)") == "true")
        #expect(try value("'d'.matches(/^[A-C]$/i)") == "false")
        // Linear time: a pattern that makes backtracking matchers explode.
        let long = String(repeating: "a", count: 5000)
        #expect(try value("'\(long)'.matches(/^(a*)*b$/)") == "false")
    }

    @Test(arguments: [
        "'a'.matches(/a/g)", "'a'.matches('/a/')", "'a'.matches(/(^a$|b)/)", "'a'.matches(/^(a|)$/)",
        "'a'.matches(/a**/)", "'a'.matches(/(a/)", "'a'.matches(/a{3,1}/)",
    ])
    func unsupportedRegexesAreRejected(_ text: String) {
        #expect(rejected(text))
    }

    @Test func queryVariable() throws {
        #expect(try value("query.orderByKey", kind: .read) == "true")
        #expect(try value("query.limitToFirst", kind: .read) == "null")
        let query = RuleQuery(order: .child("owner"), equalTo: Node("ada"), limitToFirst: 10)
        #expect(try value("query.orderByChild", kind: .read, query: query) == "'owner'")
        #expect(try value("query.equalTo", kind: .read, query: query) == "'ada'")
        #expect(try value("query.limitToFirst <= 1000", kind: .read, query: query) == "true")
        #expect(try value("query.orderByKey", kind: .read, query: query) == "false")
    }

    @Test func queryFromWireParameters() throws {
        let equal = QueryParams(
            index: .child("owner"), start: QueryBound(value: Node("u1"), name: .min), end: QueryBound(value: Node("u1"), name: .max))
        #expect(RuleQuery(equal) == RuleQuery(order: .child("owner"), equalTo: Node("u1")))
        let limited = QueryParams(limit: QueryLimit(count: 5, anchor: .last))
        #expect(RuleQuery(limited) == RuleQuery(order: .key, limitToLast: 5))
        #expect(RuleQuery(limited, orderedByPriority: true).order == .priority)
    }

    @Test func capturesAreStrings() throws {
        #expect(try value("$id == 1", captures: [("$id", "1")]) == "false")
        #expect(try value("$id == '1'", captures: [("$id", "1")]) == "true")
        #expect(try value("$id.length", captures: [("$id", "abc")]) == "3")
    }

    @Test func nowIsTheOperationTime() throws {
        #expect(try value("now") == "1234")
    }

    @Test(arguments: [
        "7", "'foo'", "auth.foo", "data.val()", "skies == 'blue'", "$x == 'a'", "root.child('a') != null",
        "root.val() > true", "root.exists", "root.notAMethod()", "root['exi' + 'sts']()", "root.val().foo == 1",
        "root.hasChildren('a')", "root.hasChildren([])", "root.hasChildren(['a', 7])", "root.child(1).exists()",
        "root.child(root).exists()", "auth.x.contains(7)", "auth.foo && true", "!auth.foo", "!data.val()",
        "auth.x == 1 ? 7 : true", "query.foo == 1", "1 + root == 2", "'a'.size() == 1", "auth.f() == 1",
        "auth.uid == 'a' ; true", "'a'.replace('a') == 'a'", "root.val(1) == 1", "newData.exists() && (1 == 1)",
    ])
    func staticErrors(_ text: String) {
        // newData is only rejected in .read: the last case checks that.
        #expect(rejected(text, kind: .read))
    }

    @Test func newDataAndQueryScopes() {
        #expect(rejected("newData.exists()", kind: .read))
        #expect(!rejected("newData.exists()", kind: .write))
        #expect(rejected("query.orderByKey", kind: .write))
        #expect(!rejected("query.orderByKey", kind: .read))
    }

    @Test func budgetBoundsAnOperation() throws {
        let expression = try Parser.parse(Array("root.child('a').exists() || root.child('b').exists()".unicodeScalars))
        let compiled = try ExpressionCompiler(kind: .read, captures: []).compileRule(expression)
        var context = EvaluationContext(auth: nil, now: 0, root: .empty, newRoot: .node(.empty), query: .plainRead, budget: 3)
        #expect(throws: RuleFailure.self) { _ = try compiled(&context) }
    }
}
