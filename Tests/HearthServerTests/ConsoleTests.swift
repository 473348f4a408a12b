import HearthCore
import HearthProtocol
import HearthRules
import HearthStorage
import HearthTesting
import Testing

@testable import HearthServer

@Suite struct ConsoleSessionsTests {
    /// Ids "t1", "t2", … so tests can name them.
    static func counting() -> () -> String {
        var next = 0
        return {
            next += 1
            return "t\(next)"
        }
    }

    @Test func theSignInCodeWorksOnceAndIsReplaced() throws {
        var sessions = ConsoleSessions(random: Self.counting())
        let code = sessions.signInCode
        let redeemed = sessions.redeem(code: code, now: 0)
        let id = try #require(redeemed)
        #expect(sessions.signInCode != code)
        #expect(sessions.redeem(code: code, now: 1) == nil)
        #expect(sessions.redeem(code: "", now: 1) == nil)
        #expect(sessions.session(id, now: 2) != nil)
        #expect(sessions.session("t999", now: 2) == nil)
        // A link not used within a day no longer works.
        var late = ConsoleSessions(random: Self.counting(), now: 0)
        #expect(late.redeem(code: late.signInCode, now: ConsoleSessions.codeLifetime) == nil)
    }

    @Test func sessionsEndWhenIdleOrOld() {
        var sessions = ConsoleSessions(random: Self.counting())
        let id = sessions.open(now: 0)
        let idle = ConsoleSessions.idleLimit
        #expect(sessions.session(id, now: idle - 1) != nil)
        // Used at idle - 1: good until 2 × idle - 1, then gone for good.
        #expect(sessions.session(id, now: 2 * idle - 2) != nil)
        #expect(sessions.session(id, now: 3 * idle) == nil)
        #expect(sessions.session(id, now: 0) == nil)

        let busy = sessions.open(now: 0)
        var now: Int64 = 0
        while now < ConsoleSessions.absoluteLimit - idle / 2 {
            now += idle / 2
            #expect(sessions.session(busy, now: now) != nil)
        }
        #expect(sessions.session(busy, now: ConsoleSessions.absoluteLimit) == nil)
    }

    @Test func theOldestSessionMakesRoomPastTheLimit() {
        var sessions = ConsoleSessions(random: Self.counting())
        let first = sessions.open(now: 0)
        for index in 1..<ConsoleSessions.maxSessions { _ = sessions.open(now: Int64(index)) }
        #expect(sessions.session(first, now: 100) != nil)
        // `first` was just used: the second oldest goes.
        _ = sessions.open(now: 101)
        #expect(sessions.session(first, now: 102) != nil)
    }

    @Test func theCookieIsReadFromAmongOthers() {
        #expect(ConsoleCookie.sessionID(in: "a=1; hearth_console=abc; b=2") == "abc")
        #expect(ConsoleCookie.sessionID(in: "hearth_console_x=abc") == nil)
        #expect(ConsoleCookie.sessionID(in: nil) == nil)
        #expect(ConsoleCookie.sessionID(in: "hearth_console=" + String(repeating: "a", count: 500)) == nil)
        let set = ConsoleCookie.set("abc", secure: true)
        #expect(set.contains("HttpOnly") && set.contains("SameSite=Strict") && set.contains("Secure") && set.contains("Path=/"))
    }
}

@Suite struct ConsoleTreePageTests {
    static func tree(_ count: Int) -> Node {
        var children: [(ChildKey, Node)] = []
        for index in 0..<count { children.append((ChildKey("k\(String(index + 100_000))"), Node(index))) }
        var root = Node.empty
        for (key, value) in children { root.set(Path([ChildKey("list"), key]), to: value) }
        root.set(Path("inner/a/b"), to: Node("deep"))
        root.set(Path("inner/c"), to: Node(true))
        return root
    }

    @Test func pagesWalkEveryChildOnceInKeyOrder() throws {
        let root = Self.tree(1_050)
        var seen: [String] = []
        var after: String?
        var pages = 0
        repeat {
            let json = ConsoleTreePage(root: root, path: Path("list"), after: after, limit: 100).json()
            let page = try Node(json: json)
            #expect(page.child("total") == Node(1_050))
            var keys: [String] = []
            page.child("children").children.forEach { _, row in
                keys.append(row.child("key").stringValue ?? "")
                return true
            }
            seen += keys
            after = keys.last
            pages += 1
            if page.child("more") == Node(false) { break }
        } while pages < 20
        #expect(pages == 11)
        #expect(seen.count == 1_050 && Set(seen).count == 1_050)
        #expect(seen == seen.sorted())
    }

    @Test func leavesCarryValuesAndInnerNodesTheirCounts() throws {
        let page = try Node(json: ConsoleTreePage(root: Self.tree(3), path: .root, after: nil, limit: nil).json())
        #expect(page.child("exists") == Node(true))
        #expect(page.child(at: Path("children/0/key")) == Node("inner"))
        #expect(page.child(at: Path("children/0/leaf")) == Node(false))
        #expect(page.child(at: Path("children/0/count")) == Node(2))
        let leaf = try Node(json: ConsoleTreePage(root: Self.tree(3), path: Path("inner"), after: nil, limit: nil).json())
        #expect(leaf.child(at: Path("children/1/value")) == Node(true))
        let value = try Node(json: ConsoleTreePage(root: Self.tree(3), path: Path("inner/c"), after: nil, limit: nil).json())
        #expect(value.child("value") == Node(true))
        let missing = try Node(json: ConsoleTreePage(root: Self.tree(3), path: Path("nothing"), after: nil, limit: nil).json())
        #expect(missing.child("exists") == Node(false))
    }

    @Test func limitsAreClamped() throws {
        let big = try Node(json: ConsoleTreePage(root: Self.tree(600), path: Path("list"), after: nil, limit: 100_000).json())
        #expect(big.child("children").childCount == ConsoleTreePage.maxLimit)
        let small = try Node(json: ConsoleTreePage(root: Self.tree(5), path: Path("list"), after: nil, limit: -3).json())
        #expect(small.child("children").childCount == 1)
    }
}

@Suite struct UsageHistoryTests {
    @Test func pointsAreRatesOverEachStep() {
        var history = UsageHistory(startingAt: 0)
        for second in 1...120 {
            history.record(.init(t: Int64(second) * 1000, connections: second, reads: second * 10, writes: second * 2, bytes: second * 1000))
        }
        let minute = history.points(.minute)
        #expect(minute.count == 60)
        #expect(minute.last == UsageHistory.Point(t: 120_000, seconds: 1, connections: 120, reads: 10, writes: 2, bytes: 1000))
        let hour = history.points(.hour)
        #expect(hour.count == 2)
        #expect(hour.last?.writes == 2)
        #expect(history.points(.day).isEmpty)
    }

    @Test func totalsThatShrinkNeverDrawNegativeRates() {
        var history = UsageHistory(startingAt: 0)
        history.record(.init(t: 1000, connections: 0, reads: 50, writes: 0, bytes: 0))
        history.record(.init(t: 2000, connections: 0, reads: 10, writes: 0, bytes: 0))
        #expect(history.points(.minute).last?.reads == 0)
    }

    /// What the server did before its first tick is in the first point: the history begins at the
    /// server's start with nothing done, not at the first tick with everything so far as its baseline.
    @Test func whatIsDoneBeforeTheFirstTickIsCharted() {
        var history = UsageHistory(startingAt: 5_000)
        history.record(.init(t: 6_000, connections: 3, reads: 0, writes: 200, bytes: 4_000))
        #expect(history.points(.minute) == [UsageHistory.Point(t: 6_000, seconds: 1, connections: 3, reads: 0, writes: 200, bytes: 4_000)])
        // The hour's first point comes a minute after the start, with everything since then.
        history.record(.init(t: 65_000, connections: 3, reads: 0, writes: 260, bytes: 4_000))
        #expect(history.points(.hour).first?.writes == 260.0 / 60)
    }
}

@Suite struct ConsoleRulesTests {
    @Test func boltAndJSONErrorsCarryTheirLineAndColumn() {
        let json = RulesDraft(source: "{\n  \"rules\": {\n    \".read\": auth !=\n  }\n}", format: .json).compile()
        guard case .failure(let problem) = json else { Issue.record("compiled"); return }
        #expect(problem.line == 3)
        let bolt = RulesDraft(source: "path /x {\n  read() { true }\n  write() { = }\n}", format: .bolt).compile()
        guard case .failure(let boltProblem) = bolt else { Issue.record("compiled"); return }
        #expect(boltProblem.line == 3)
        guard case .success(let compiled) = RulesDraft(source: "path /x { read() { true } }", format: .bolt).compile() else {
            Issue.record("did not compile"); return
        }
        #expect(compiled.json.contains("\".read\""))
    }

    @Test func theSimulatorDecidesAsTheRulesAndFindsTheLine() throws {
        let source = """
            {
              "rules": {
                "users": {
                  "$uid": {
                    ".read": "auth != null && auth.uid == $uid",
                    ".write": "auth.uid == $uid",
                    ".validate": "newData.isString()"
                  }
                }
              }
            }
            """
        let rules = try RuleSet(source: source)
        var simulation = RulesSimulation(operation: .read, path: Path("users/alice"), uid: "alice")
        let allowed = simulation.decide(rules, root: .empty, now: 0)
        #expect(allowed.allowed)
        #expect(RulesSimulation.line(of: try #require(allowed.rule), in: source) == 5)
        simulation.uid = nil
        #expect(!simulation.decide(rules, root: .empty, now: 0).allowed)
        let write = RulesSimulation(operation: .set, path: Path("users/bob"), uid: "bob", value: Node(12))
        let invalid = write.decide(rules, root: .empty, now: 0)
        #expect(!invalid.allowed)
        #expect(invalid.rule?.kind == .validate)
        #expect(RulesSimulation.line(of: try #require(invalid.rule), in: source) == 7)
        var claims = RulesSimulation(operation: .update, path: Path("users/bob"), uid: "bob", value: Node(["x": Node("s")]))
        claims.claims = Node(["admin": Node(true)])
        #expect(claims.auth?.child(at: Path("token/admin")) == Node(true))
        #expect(claims.auth?.child("uid") == Node("bob"))
    }
}

@Suite struct ConsoleAccessTests {
    static func signedIn(_ server: DatabaseServer) async throws -> (cookie: String, csrf: String) {
        let link = server.consoleSignInLink(base: "")
        let redirect = try await send(server, .get, link)
        #expect(redirect.status == 303)
        let setCookie = try #require(redirect.header("set-cookie"))
        let cookie = String(try #require(setCookie.split(separator: ";").first))
        let session = try await send(server, .get, "/console/api/session", headers: ["cookie": cookie])
        let csrf = try #require(try Node(json: session.bodyText).child("csrf").stringValue)
        return (cookie, csrf)
    }

    @Test func theConsoleIsForItsSessionOnly() async throws {
        let server = makeServer(emulator: false, adminToken: "secret")
        let (cookie, csrf) = try await Self.signedIn(server)
        // The link is spent.
        #expect(try await send(server, .get, "/console/signin?code=x").header("location") == "/console/?signin=failed")
        // Data under a key called `console` is still the database's.
        #expect(try await send(server, .put, "/console/x.json", body: "1", headers: ["authorization": "Bearer secret"]).status == 200)
        #expect(try await send(server, .get, "/console/x.json", headers: ["authorization": "Bearer secret"]).bodyText == "1")
        for path in ["session", "usage", "namespaces", "rules", "children"] {
            #expect(try await send(server, .get, "/console/api/\(path)").status == 401)
            #expect(try await send(server, .get, "/console/api/\(path)", headers: ["cookie": "hearth_console=forged"]).status == 401)
        }
        // The cookie is the admin only with its CSRF token, reads included (a page of another site on
        // this host could otherwise read with it: `<script src=…?callback=…>`). Without the token the
        // request is signed out (the same browser's other pages send the cookie with theirs); a wrong one
        // is refused.
        #expect(try await send(server, .get, "/a.json", headers: ["cookie": cookie]).status == 401)
        #expect(try await send(server, .get, "/a.json?callback=leak", headers: ["cookie": cookie]).status == 401)
        #expect(try await send(server, .get, "/a.json", headers: ["cookie": cookie, "x-hearth-csrf": "wrong"]).status == 403)
        #expect(try await send(server, .get, "/console/api/usage", headers: ["cookie": cookie]).status == 403)
        #expect(try await send(server, .get, "/a.json", headers: ["cookie": cookie, "x-hearth-csrf": csrf]).status == 200)
        #expect(try await send(server, .put, "/a.json", body: "1", headers: ["cookie": cookie]).status == 401)
        #expect(try await send(server, .put, "/a.json", body: "1", headers: ["cookie": cookie, "x-hearth-csrf": "wrong"]).status == 403)
        #expect(try await send(server, .put, "/a.json", body: "1", headers: ["cookie": cookie, "x-hearth-csrf": csrf]).status == 200)
        #expect(try await send(server, .get, "/a.json").status == 401)
        // Console changes need it too.
        let create = #"{"name":"made"}"#
        #expect(try await send(server, .post, "/console/api/namespaces", body: create, headers: ["cookie": cookie]).status == 403)
        #expect(try await send(server, .post, "/console/api/namespaces", body: create, headers: ["cookie": cookie, "x-hearth-csrf": csrf]).status == 201)
        // Signing out ends the session, and the streams it opened.
        // The feed takes the token in its header only: in the URL, proxies and browsers would log it.
        let inURL = RecordingResponder()
        server.handle(
            HTTPRequest(method: .get, path: "/console/api/changes", queryItems: [("csrf", csrf)], headers: ["cookie": cookie]),
            responder: inURL)
        #expect(inURL.response?.status == 403)
        let feed = RecordingResponder()
        server.handle(
            HTTPRequest(method: .get, path: "/console/api/changes", headers: ["cookie": cookie, "x-hearth-csrf": csrf]),
            responder: feed)
        #expect(feed.streamStatus == 200)
        #expect(try await send(server, .post, "/console/api/signout", headers: ["cookie": cookie, "x-hearth-csrf": csrf]).status == 200)
        #expect(feed.finished)
        #expect(try await send(server, .get, "/console/api/session", headers: ["cookie": cookie]).status == 401)
    }

    @Test func theAdminTokenOpensASessionAndNothingElseDoes() async throws {
        let server = makeServer(emulator: false, adminToken: "secret")
        #expect(try await send(server, .post, "/console/api/signin", body: #"{"token":"nope"}"#).status == 401)
        #expect(try await send(server, .post, "/console/api/signin", body: "garbage").status == 401)
        let good = try await send(server, .post, "/console/api/signin", body: #"{"token":"secret"}"#)
        #expect(good.status == 200)
        #expect(good.header("set-cookie")?.hasPrefix("hearth_console=") == true)
    }

    @Test func rulesDeployedFromTheConsoleAreVersionedAndRollBack() async throws {
        let server = makeServer(emulator: false, adminToken: "secret")
        let (cookie, csrf) = try await Self.signedIn(server)
        let headers = ["cookie": cookie, "x-hearth-csrf": csrf]
        let open = #"{"source":"{\"rules\":{\".read\":true}}","format":"json"}"#
        let broken = #"{"source":"{\"rules\":{\".read\":tru}}","format":"json"}"#
        let refused = try await send(server, .post, "/console/api/rules/deploy", body: broken, headers: headers)
        #expect(refused.status == 400)
        #expect(try Node(json: refused.bodyText).child(at: Path("error/line")) == Node(1))
        #expect(try await send(server, .post, "/console/api/rules/deploy", body: open, headers: headers).status == 200)
        #expect(try await send(server, .get, "/x.json").status == 200)
        let bolt = #"{"source":"path /x { read() { false } }","format":"bolt"}"#
        #expect(try await send(server, .post, "/console/api/rules/deploy", body: bolt, headers: headers).status == 200)
        #expect(try await send(server, .get, "/x.json").status == 401)
        let listed = try Node(json: try await send(server, .get, "/console/api/rules", headers: headers).bodyText)
        #expect(listed.child("format") == Node("bolt"))
        #expect(listed.child(at: Path("history/0/version")) == Node(2))
        #expect(try await send(server, .post, "/console/api/rules/rollback", body: #"{"version":1}"#, headers: headers).status == 200)
        #expect(try await send(server, .get, "/x.json").status == 200)
        let simulated = try await send(
            server, .post, "/console/api/rules/simulate", body: #"{"operation":"read","path":"/x","auth":null}"#, headers: headers)
        #expect(try Node(json: simulated.bodyText).child("allowed") == Node(true))
    }

    @Test func namespacesAreCreatedAndDeletedWithTheirClients() async throws {
        let server = makeServer(emulator: false, adminToken: "secret")
        let (cookie, csrf) = try await Self.signedIn(server)
        let headers = ["cookie": cookie, "x-hearth-csrf": csrf]
        #expect(try await send(server, .post, "/console/api/namespaces", body: #"{"name":"auth"}"#, headers: headers).status == 400)
        #expect(try await send(server, .post, "/console/api/namespaces", body: #"{"name":"AUTH"}"#, headers: headers).status == 400)
        // hooks.sqlite is the webhooks' store, beside the namespaces' files.
        #expect(try await send(server, .post, "/console/api/namespaces", body: #"{"name":"hooks"}"#, headers: headers).status == 400)
        #expect(try await send(server, .post, "/console/api/namespaces", body: #"{"name":"a.b"}"#, headers: headers).status == 400)
        #expect(try await send(server, .post, "/console/api/namespaces", body: #"{"name":"shop"}"#, headers: headers).status == 201)
        #expect(try await send(server, .post, "/console/api/namespaces", body: #"{"name":"shop"}"#, headers: headers).status == 409)
        #expect(try await send(server, .put, "/x.json?ns=shop", body: "1", headers: headers).status == 200)
        let stream = RecordingResponder()
        server.handle(
            HTTPRequest(method: .get, path: "/x.json", queryItems: [("ns", "shop")], headers: ["accept": "text/event-stream", "authorization": "Bearer secret"]),
            responder: stream)
        #expect(try await send(server, .delete, "/console/api/namespaces/shop", body: #"{"confirm":"shop!"}"#, headers: headers).status == 400)
        #expect(try await send(server, .delete, "/console/api/namespaces/shop", body: #"{"confirm":"shop"}"#, headers: headers).status == 200)
        #expect(stream.finished)
        #expect(stream.text.contains("event: cancel"))
        #expect(server.namespaces["shop"] == nil)
    }
}
