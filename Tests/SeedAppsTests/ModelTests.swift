import Foundation
import Testing

@testable import SeedApps
@testable import SeedTerminal

@Suite struct AppOptionsTests {
    @Test func parsesFlagsAndRefusesWhatItDoesNotKnow() throws {
        let options = try AppOptions.parse(["--url", "http://h:1?ns=x", "--data", "/d", "--token", "t", "--rules", "r.bolt"])
        #expect(options.databaseURL == "http://h:1?ns=x" && options.dataDirectory == "/d" && options.adminToken == "t" && options.rulesFile == "r.bolt")
        #expect(try AppOptions.parse([]).databaseURL == "http://localhost:9000?ns=seed")
        #expect(try AppOptions.parse(["-h"]).showHelp)
        #expect(throws: AppOptions.UsageError.self) { try AppOptions.parse(["--url"]) }
        #expect(throws: AppOptions.UsageError.self) { try AppOptions.parse(["--url", "ftp://x"]) }
        #expect(throws: AppOptions.UsageError.self) { try AppOptions.parse(["--nope"]) }
    }

    @Test func defaultRulesAreRecognised() {
        #expect(RulesSetup.isDefault("{\n  \"rules\": {\n    \".read\": false,\n    \".write\": false\n  }\n}\n"))
        #expect(RulesSetup.isDefault(#"{"rules":{".read":true,".write":true}}"#))
        #expect(!RulesSetup.isDefault(#"{"rules":{"jokes":{".read":true}}}"#))
    }
}

@Suite struct LoginFormTests {
    func type(_ text: String, into form: inout LoginForm) {
        for character in text { _ = form.handle(.character(character)) }
    }

    @Test func signInMovesThroughFieldsAndSubmits() {
        var form = LoginForm()
        #expect(form.handle(.enter) == .none)  // empty email: moves on
        #expect(form.focus == 1)
        #expect(form.handle(.enter) == .none)
        #expect(form.message == "Enter your email address.")
        type("ann@example.com", into: &form)
        _ = form.handle(.tab)
        type("secret123", into: &form)
        #expect(form.handle(.enter) == .submit(LoginRequest(mode: .signIn, identifier: "ann@example.com", password: "secret123")))
        #expect(form.isBusy)
        #expect(form.handle(.character("x")) == .none)  // busy: typing waits
        form.failed("Wrong email, username or password.")
        #expect(!form.isBusy && form.focus == 1 && form.message == "Wrong email, username or password.")
        #expect(form.handle(.escape) == .quit)
    }

    @Test func signUpAsksAUsernameWhereTheAppHasThem() {
        var form = LoginForm(asksUsername: true)
        _ = form.handle(.ctrl("t"))
        #expect(form.mode == .signUp)
        type("ann@example.com", into: &form)
        _ = form.handle(.enter)
        type("secret123", into: &form)
        _ = form.handle(.enter)
        type("a!", into: &form)
        #expect(form.handle(.enter) == .none)
        #expect(form.message?.contains("username") == true)
        _ = form.handle(.backspace)
        _ = form.handle(.backspace)
        type("Ann_1", into: &form)
        #expect(form.handle(.enter) == .submit(LoginRequest(mode: .signUp, identifier: "ann@example.com", password: "secret123", username: "ann_1")))
        let screen = form.render(title: "t", width: 80).lines.map(\.text).joined(separator: "\n")
        #expect(screen.contains("Create an account") && screen.contains("Username") && !screen.contains("secret123"))
    }
}

@Suite struct JokesModelTests {
    @Test func theFeedIsNewestFirstAndKeepsTheSelection() {
        var model = JokesModel()
        model.setJokes([
            (key: "-A", value: ["text": "first", "author": "ann", "votes": 2]),
            (key: "-B", value: ["text": "second", "author": "bob", "votes": 0]),
            (key: "-C", value: "not a joke"),
        ])
        #expect(model.jokes.map(\.id) == ["-B", "-A"])
        _ = model.handle(.down, uid: "ann")
        #expect(model.selectedJoke?.id == "-A")
        model.setJokes([
            (key: "-A", value: ["text": "first", "author": "ann", "votes": 2]),
            (key: "-B", value: ["text": "second", "author": "bob", "votes": 0]),
            (key: "-D", value: ["text": "third", "author": "bob", "votes": 0]),
        ])
        #expect(model.selectedJoke?.id == "-A")  // a new joke on top does not move the selection
    }

    @Test func votesToggleOncePerPressUntilSettled() {
        var model = JokesModel()
        model.setJokes([(key: "-A", value: ["text": "t", "author": "bob", "votes": 0])])
        #expect(model.handle(.character("v"), uid: "ann").command == .vote(jokeID: "-A", up: true))
        #expect(model.handle(.character("v"), uid: "ann").command == nil)  // the first is still in flight
        model.setVotes(["-A"])
        model.voteSettled("-A")
        #expect(model.handle(.character("v"), uid: "ann").command == .vote(jokeID: "-A", up: false))
        // Only the author may delete.
        #expect(model.handle(.character("d"), uid: "ann").command == nil)
        #expect(model.handle(.character("d"), uid: "bob").command == .delete(jokeID: "-A"))
    }

    @Test func theComposerPostsTrimmedText() {
        var model = JokesModel()
        _ = model.handle(.character("n"), uid: "ann")
        for character in "  knock knock " { _ = model.handle(.character(character), uid: "ann") }
        #expect(model.handle(.character("q"), uid: "ann").handled)  // typing, not quitting
        _ = model.handle(.backspace, uid: "ann")
        #expect(model.handle(.enter, uid: "ann").command == .post(text: "knock knock"))
        #expect(model.composer == nil)
        _ = model.handle(.character("n"), uid: "ann")
        #expect(model.handle(.enter, uid: "ann").command == nil)  // nothing to post
        #expect(!model.handle(.character("q"), uid: "ann").handled)  // the shell's quit key again
    }
}

@Suite struct SocialModelTests {
    @Test func peopleFollowersAndTheFollowToggle() {
        var model = SocialModel()
        model.setPeople([
            (key: "u1", value: ["username": "zed", "followers": 1]),
            (key: "me", value: ["username": "me"]),
            (key: "u2", value: ["username": "amy"]),
        ], except: "me")
        #expect(model.people.map(\.username) == ["amy", "zed"])
        model.setFollowing(["u1"])
        model.setFollowers(["u2"])
        #expect(model.name(of: "u2") == "@amy")
        #expect(model.handle(.character("f")).command == .follow(uid: "u2"))
        #expect(model.handle(.character("f")).command == nil)  // pending
        model.settled("u2")
        _ = model.handle(.down)
        #expect(model.handle(.character("f")).command == .unfollow(uid: "u1"))
        let screen = model.render(width: 80, height: 20, me: Profile(uid: "me", username: "me", followers: 1)).lines.map(\.text).joined(separator: "\n")
        #expect(screen.contains("Following you: @amy") && screen.contains("✓ following"))
    }

    /// An account made in another app has no profile here: the screen says so, and u claims a username.
    @Test func anAccountWithoutAProfileChoosesAUsername() {
        var model = SocialModel()
        model.setPeople([(key: "u1", value: ["username": "zed"])], except: "me")
        #expect(!model.handle(.character("u")).handled, "u does nothing while the profile is there or loading")
        model.needsProfile = true
        var screen = model.render(width: 100, height: 20, me: nil).lines.map(\.text).joined(separator: "\n")
        #expect(screen.contains("No profile here yet") && screen.contains("press u"))
        #expect(model.handle(.character("u")).handled)
        for character in "Al" { _ = model.handle(.character(character)) }
        #expect(model.handle(.enter).command == nil, "two letters are too short")
        let refused = model.render(width: 100, height: 20, me: nil)
        #expect(refused.lines.map(\.text).contains("Choose a username of 3–20 letters, digits or '_'."))
        #expect(refused.cursor?.column == 5)
        _ = model.handle(.character("x"))
        #expect(model.handle(.enter).command == .claim(username: "alx"))
        #expect(model.usernameField == nil)
        _ = model.handle(.character("u"))
        _ = model.handle(.escape)
        screen = model.render(width: 100, height: 20, me: nil).lines.map(\.text).joined(separator: "\n")
        #expect(model.usernameField == nil && !screen.contains("Your username"))
    }
}

@Suite struct BoardModelTests {
    func message(_ id: String, _ text: String, at time: Double) -> Message { Message(id: id, text: text, author: "ann", sentAt: time) }

    @Test func childEventsKeepTheBoardInOrderAndAreLogged() {
        var model = BoardModel()
        model.apply(.added(message("-A", "one", at: 1), after: nil))
        model.apply(.added(message("-B", "two", at: 2), after: "-A"))
        model.apply(.added(message("-C", "zero", at: 0), after: nil))
        #expect(model.messages.map(\.id) == ["-C", "-A", "-B"])
        model.apply(.changed(message("-A", "one!", at: 1)))
        model.apply(.moved(id: "-C", after: "-B"))
        #expect(model.messages.map(\.id) == ["-A", "-B", "-C"])
        #expect(model.messages.first?.text == "one!")
        model.apply(.removed(id: "-B"))
        #expect(model.messages.map(\.id) == ["-A", "-C"])
        #expect(model.events.last == "childRemoved -B")
        for index in 0..<10 { model.apply(.added(message("-X\(index)", "x", at: 9), after: "-C")) }
        #expect(model.events.count == BoardModel.eventLogLength)
    }

    @Test func postsNeedAVerifiedAddress() {
        var model = BoardModel()
        _ = model.handle(.tab, uid: "ann")
        #expect(model.tab == .posts)
        _ = model.handle(.character("n"), uid: "ann")
        #expect(model.editor == nil)
        #expect(model.handle(.character("s"), uid: "ann").command == .sendVerification)
        #expect(model.handle(.character("r"), uid: "ann").command == .checkVerification)
        model.isVerified = true
        _ = model.handle(.character("n"), uid: "ann")
        for character in "Title" { _ = model.handle(.character(character), uid: "ann") }
        _ = model.handle(.enter, uid: "ann")  // to the body
        for character in "Body" { _ = model.handle(.character(character), uid: "ann") }
        #expect(model.handle(.enter, uid: "ann").command == .createPost(title: "Title", body: "Body"))
        model.setPosts([
            (key: "-P1", value: ["title": "old", "body": "b", "createdAt": 1]),
            (key: "-P2", value: ["title": "new", "body": "b", "createdAt": 2]),
        ])
        #expect(model.posts.map(\.id) == ["-P2", "-P1"])
        #expect(model.handle(.character("d"), uid: "ann").command == .deletePost(id: "-P2"))
    }

    @Test func onlyTheAuthorEditsAMessage() {
        var model = BoardModel()
        model.apply(.added(Message(id: "-A", text: "hi", author: "bob", sentAt: 1), after: nil))
        _ = model.handle(.character("e"), uid: "ann")
        #expect(model.editor == nil)
        #expect(model.handle(.character("d"), uid: "ann").command == nil)
        _ = model.handle(.character("e"), uid: "bob")
        _ = model.handle(.character("!"), uid: "bob")
        #expect(model.handle(.enter, uid: "bob").command == .editMessage(id: "-A", text: "hi!"))
    }
}

@Suite struct ErrorTextTests {
    @Test func authErrorsReadAsWhatToDo() {
        func auth(_ code: Int) -> NSError { NSError(domain: "FIRAuthErrorDomain", code: code) }
        #expect(ErrorText.describe(auth(17004), serverURL: "u").contains("Wrong"))
        #expect(ErrorText.describe(auth(17007), serverURL: "u").contains("sign in instead"))
        #expect(ErrorText.describe(auth(17020), serverURL: "http://x").contains("http://x"))
        #expect(ErrorText.describe(NSError(domain: "com.firebase", code: 1, userInfo: [NSLocalizedDescriptionKey: "Permission denied"]), serverURL: "u")
            .contains("Not allowed"))
    }
}
