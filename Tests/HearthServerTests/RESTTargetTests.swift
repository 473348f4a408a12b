import HearthCore
import Testing

@testable import HearthServer

@Test("Data URLs name the location with or without a slash before .json", arguments: [
    ("/users/ada.json", "users/ada"), ("/users/ada/.json", "users/ada"), ("/.json", ""), ("//a//b/.json", "a/b"),
])
func dataURLsNameTheLocation(url: String, path: String) throws {
    let target = try RESTTarget(path: url, queryItems: [])
    #expect(target.path == Path(path))
}

@Test func pathsWithoutJSONSuffixAreNotFound() {
    #expect(throws: RESTError(404, "Not found: data URLs end in .json, like /users/ada.json")) {
        try RESTTarget(path: "/users/ada", queryItems: [])
    }
}

@Test("Invalid keys and unknown parameters are 400", arguments: [
    ("/a$b.json", [(String, String)]()), ("/a#b.json", []), ("/x.json", [("bogus", "1")]),
    ("/x.json", [("print", "loud")]), ("/x.json", [("orderBy", "score")]), ("/x.json", [("limitToFirst", "-1")]),
    ("/x.json", [("limitToFirst", "1"), ("limitToLast", "1")]), ("/x.json", [("startAt", "{\"a\":1}")]),
    ("/x.json", [("orderBy", "\"$key\""), ("startAt", "1")]), ("/x.json", [("timeout", "20min")]),
    ("/x.json", [("auth_variable_override", "{nope")]),
    // Numbers at the edges of Int: compared with the bound, never multiplied (9223372036854775807s trapped).
    ("/x.json", [("timeout", "9223372036854775807s")]), ("/x.json", [("timeout", "153722867280913min")]),
    ("/x.json", [("timeout", "9223372036854775808ms")]), ("/x.json", [("timeout", "-1s")]),
    ("/x.json", [("limitToFirst", "2147483648")]), ("/x.json", [("limitToLast", "99999999999999999999")]),
])
func invalidInputIs400(url: String, items: [(String, String)]) {
    do {
        _ = try RESTTarget(path: url, queryItems: items.map { (name: $0.0, value: $0.1) })
        Issue.record("accepted \(url) \(items)")
    } catch {
        #expect(error.status == 400)
    }
}

@Test("Timeouts up to 15 minutes are accepted in every unit", arguments: ["900000ms", "900s", "15min", "0s"])
func timeoutsWithinTheBoundAreAccepted(timeout: String) throws {
    _ = try RESTTarget(path: "/x.json", queryItems: [(name: "timeout", value: timeout)])
}

@Test func aLimitOverTheBoundNamesTheBound() {
    #expect(throws: RESTError(400, "limitToFirst must be at most 2147483647")) {
        try RESTTarget(path: "/x.json", queryItems: [(name: "limitToFirst", value: "2147483648")])
    }
    #expect(throws: RESTError(400, "limitToLast must be a non-negative integer")) {
        try RESTTarget(path: "/x.json", queryItems: [(name: "limitToLast", value: "-5")])
    }
}

@Test func queryParametersMapOntoQueryParams() throws {
    let target = try RESTTarget(path: "/scores.json", queryItems: [
        ("orderBy", "\"height\""), ("startAt", "0.6,\"b\""), ("endAt", "3"), ("limitToLast", "2"), ("ns", "demo"),
        ("print", "pretty"), ("format", "export"),
    ])
    let query = try #require(target.query)
    #expect(query.index == .child("height"))
    #expect(query.start == QueryBound(value: Node(0.6), name: .key("b")))
    #expect(query.end == QueryBound(value: Node(3), name: .max))
    #expect(query.limit == QueryLimit(count: 2, anchor: .last))
    #expect(target.namespace == "demo")
    #expect(target.print == .pretty)
    #expect(target.exportFormat)
}

@Test func equalToBoundsBothEnds() throws {
    let query = try #require(try RESTTarget(path: "/x.json", queryItems: [("orderBy", "\"$value\""), ("equalTo", "\"a,b\"")]).query)
    #expect(query.index == .value)
    #expect(query.start == QueryBound(value: Node("a,b"), name: .min))
    #expect(query.end == QueryBound(value: Node("a,b"), name: .max))
}

@Test func namespaceComesFromTheFirstHostLabel() {
    #expect(DatabaseServer.namespace(fromHost: "demo-x-default-rtdb.firebaseio.com") == "demo-x-default-rtdb")
    #expect(DatabaseServer.namespace(fromHost: "Foo.europe-west1.firebasedatabase.app:443") == "foo")
    #expect(DatabaseServer.namespace(fromHost: "localhost:9000") == nil)
    #expect(DatabaseServer.namespace(fromHost: "127.0.0.1:9000") == nil)
}

@Test func patchBodiesKeepNullsAndMultiPathKeys() throws {
    let values = try WriteBody.update(Array(#"{"b":"three","c/d":true,"temp":null}"#.utf8), at: "x")
    #expect(values.map(\.0) == [Path("b"), Path("c/d"), Path("temp")])
    #expect(values[2].1.isEmpty)
    #expect(throws: WriteFailure.self) { try WriteBody.update(Array(#"{"a":1,"a/b":2}"#.utf8), at: "x") }
    #expect(throws: WriteFailure.self) { try WriteBody.update(Array(#"[1]"#.utf8), at: "x") }
    #expect(try WriteBody.update(Array("{}".utf8), at: "x").isEmpty)
}

@Test func rulesCommentsAreStripped() throws {
    let source = "{\n // the rules\n \"rules\": { /* all */ \".read\": \"auth != null // not a comment\" }\n}"
    let node = try Node(json: RulesText.stripComments(source))
    #expect(node.child(at: "rules/.read").stringValue == "auth != null // not a comment")
}
