import HearthCore
import Testing
@testable import HearthRules

/// The worked examples of docs/rules.md §11, one test each.
struct SpecExampleTests {
    func rules(_ json: String) throws -> RuleSet { try RuleSet(source: #"{"rules": "# + json + "}") }
    func tree(_ json: String) throws -> Node { try Node(json: json) }
    let alice = try! Node(json: #"{"uid": "alice"}"#)

    func read(_ r: RuleSet, _ path: Path, data: String = "null", auth: Node? = nil, query: RuleQuery = .plainRead) throws -> Bool {
        r.canRead(at: path, root: try tree(data), auth: auth, now: 1000, query: query).allowed
    }

    func set(_ r: RuleSet, _ path: Path, _ value: String, data: String = "null", auth: Node? = nil) throws -> Bool {
        r.canWrite(at: path, newValue: try Node(json: value), root: try tree(data), auth: auth, now: 1000).allowed
    }

    func update(_ r: RuleSet, _ path: Path, _ values: [(String, String)], data: String = "null", auth: Node? = nil) throws -> Bool {
        let children = try values.map { (Path($0.0), try Node(json: $0.1)) }
        return r.canUpdate(at: path, children: children, root: try tree(data), auth: auth, now: 1000).allowed
    }

    @Test func example1AncestorGrantWins() throws {
        let r = try rules(#"{"foo": {".read": true, "bar": {".read": false}}}"#)
        #expect(try read(r, "foo/bar"))
    }

    @Test func example2RulesAreNotFilters() throws {
        let r = try rules(#"{"records": {"rec1": {".read": true}}}"#)
        #expect(try !read(r, "records"))
        #expect(try read(r, "records/rec1"))
    }

    @Test func example3WriteRuleBelowTargetIgnored() throws {
        let r = try rules(#"{"a": {"b": {".write": true}}}"#)
        #expect(try !set(r, "a", #"{"b": 1}"#))
        #expect(try update(r, "a", [("b", "1")]))
    }

    @Test func example4UpdatesAreAllOrNothing() throws {
        let r = try rules(#"{"a": {"b": {".write": true}, "c": {".write": false}}}"#)
        #expect(try !update(r, "a", [("b", "1"), ("c", "2")]))
    }

    @Test func example5ValidateSeesMergedData() throws {
        let r = try rules(#"{".write": true, "widget": {".validate": "newData.hasChildren(['color','size'])"}}"#)
        #expect(try set(r, "widget/size", "99", data: #"{"widget": {"color": "red", "size": 1}}"#))
        #expect(try !set(r, "widget/size", "99"))
    }

    @Test func example6ValidateSkippedOnDelete() throws {
        let r = try rules(#"{".write": true, "widget": {".validate": "newData.hasChildren(['color','size'])"}}"#)
        #expect(try set(r, "widget", "null", data: #"{"widget": {"color": "red"}}"#))
    }

    @Test func example7DeletingARequiredChild() throws {
        let r = try rules(#"{".write": true, "p": {".validate": "newData.hasChildren(['x'])"}}"#)
        let data = #"{"p": {"x": 1, "y": 2}}"#
        #expect(try update(r, "p", [("y", "null")], data: data))
        #expect(try !update(r, "p", [("x", "null")], data: data))
    }

    @Test func example8Other() throws {
        let r = try rules(#"{"widget": {"title": {".validate": true}, "$other": {".validate": false}}, ".write": true}"#)
        #expect(try set(r, "widget", #"{"title": "x"}"#))
        #expect(try !set(r, "widget", #"{"title": "x", "z": 1}"#))
        #expect(try set(r, "widget", #"{"title": "x", "z": null}"#))
    }

    @Test func example9LiteralBeatsWildcard() throws {
        let r = try rules(#"{"m": {"$id": {".read": false}, "m1": {".read": true}}}"#)
        #expect(try read(r, "m/m1"))
        #expect(try !read(r, "m/m2"))
    }

    @Test func example10KeysAreStrings() throws {
        let r = try rules(#"{"items": {"$id": {".read": "$id == 1"}}}"#)
        #expect(try !read(r, "items/1"))
    }

    @Test func example11RootIsPreWrite() throws {
        let before = try rules(#"{"flag": {".write": true}, "x": {".write": "root.child('flag').val() == true"}}"#)
        #expect(try !update(before, .root, [("flag", "true"), ("x", "1")], data: #"{"flag": false}"#))
        let after = try rules(#"{"flag": {".write": true}, "x": {".write": "newData.parent().child('flag').val() == true"}}"#)
        #expect(try update(after, .root, [("flag", "true"), ("x", "1")], data: #"{"flag": false}"#))
    }

    @Test func example12ErrorsPoisonOr() throws {
        let poisoned = try rules(#"{".read": "root.child('users/' + auth.uid).exists() || true"}"#)
        #expect(try !read(poisoned, .root))
        let guarded = try rules(#"{".read": "true || root.child('users/' + auth.uid).exists()"}"#)
        #expect(try read(guarded, .root))
    }

    @Test func example13NullComparison() throws {
        let r = try rules(#"{".write": "data.child('level').val() >= 20 || auth.uid == 'alice'"}"#)
        #expect(try !set(r, "x", "1", auth: alice))
    }

    @Test func example14ServerTime() throws {
        let r = try rules(#"{".write": true, "t": {".validate": "newData.val() == now"}}"#)
        #expect(try set(r, "t", #"{".sv": "timestamp"}"#))
        #expect(try !set(r, "t", "5"))
    }

    @Test func example15ReplaceReplacesAll() throws {
        let r = try rules(#"{".write": true, ".validate": "newData.val().replace('-', '') == 'abc'"}"#)
        #expect(try set(r, .root, #""a-b-c""#))
    }

    @Test func example16QueryRule() throws {
        let r = try rules(#"{"baskets": {".read": "query.orderByChild == 'owner' && query.equalTo == auth.uid"}}"#)
        let query = RuleQuery(order: .child("owner"), equalTo: Node("alice"))
        #expect(try read(r, "baskets", auth: alice, query: query))
        #expect(try !read(r, "baskets", auth: alice))
    }

    @Test func example17DefaultQueryFlags() throws {
        let r = try rules(#"{".read": "query.orderByKey && query.limitToFirst <= 1000"}"#)
        #expect(try read(r, .root, query: RuleQuery(limitToFirst: 1000)))
        #expect(try !read(r, .root))
        // The wire form of limitToFirst(1000): no index (priority order on the wire).
        let wire = QueryParams(limit: QueryLimit(count: 1000, anchor: .first))
        #expect(r.canRead(at: .root, root: .empty, auth: nil, now: 0, query: wire).allowed)
    }

    @Test func example18CreateUpdateDelete() throws {
        let createOnly = try rules(#"{"x": {".write": "data.val() == null"}}"#)
        #expect(try set(createOnly, "x", "1"))
        #expect(try !set(createOnly, "x", "2", data: #"{"x": 1}"#))
        #expect(try !set(createOnly, "x", "null", data: #"{"x": 1}"#))
        let updateOnly = try rules(#"{"x": {".write": "(data.val() != null && newData.val() != null)"}}"#)
        #expect(try !set(updateOnly, "x", "1"))
        #expect(try set(updateOnly, "x", "2", data: #"{"x": 1}"#))
        #expect(try !set(updateOnly, "x", "null", data: #"{"x": 1}"#))
    }

    @Test func example19Arrays() throws {
        let r = try rules(#"{".write": true, "list": {"$i": {".validate": "newData.isNumber()"}}}"#)
        #expect(try set(r, "list", "[10, 20]"))
        #expect(try !set(r, "list", #"["x"]"#))
    }

    @Test func example20NumberToString() throws {
        let r = try rules(#"{".write": true, ".validate": "(newData.val() + '').matches(/^-?\\d+$/)"}"#)
        #expect(try set(r, .root, "0"))
        #expect(try set(r, .root, "0.0"))
        #expect(try set(r, .root, "-123"))
        #expect(try !set(r, .root, "1.1"))
    }
}
