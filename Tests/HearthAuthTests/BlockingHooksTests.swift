import Foundation
import HearthAuth
import Testing

/// The pure parts of blocking auth hooks: what an answer means, and the configuration an admin sends.
/// Hooks asked by a real server are in Tests/compat/test_blocking_hooks.py.
@Suite struct BlockingHooksTests {
    func answer(_ status: Int, _ body: String, _ event: BlockingHooks.Event = .beforeSignIn) -> BlockingHookAnswer {
        BlockingHookAnswer(status: status, body: Array(body.utf8), event: event)
    }

    @Test func twoHundredsAllowWithTheChangesTheyName() {
        #expect(answer(200, "") == .allow(BlockingHookChanges()))
        #expect(answer(204, " \n") == .allow(BlockingHookChanges()))
        guard case .allow(let changes) = answer(200, #"{"displayName":"Ada","emailVerified":true,"customClaims":{"role":"admin"},"sessionClaims":{"ip":"x"}}"#) else {
            Issue.record("a 200 with changes did not allow")
            return
        }
        #expect(changes.displayName == "Ada" && changes.emailVerified == true && changes.disabled == nil)
        #expect(changes.customClaims == #"{"role":"admin"}"# && changes.sessionClaims == #"{"ip":"x"}"#)
        #expect(changes.changesAccount)
    }

    @Test func fourHundredsRefuseWithTheHooksMessage() {
        #expect(answer(403, #"{"error":{"message":"no","status":"PERMISSION_DENIED"}}"#) == .deny(message: "no", status: "PERMISSION_DENIED"))
        #expect(answer(400, "plain words") == .deny(message: "HTTP 400", status: "INVALID_ARGUMENT"))
        #expect(answer(401, #"{"error":{"message":"x","status":"lower case"}}"#) == .deny(message: "x", status: "PERMISSION_DENIED"))
        let long = String(repeating: "a", count: 5000)
        guard case .deny(let message, _) = answer(422, #"{"error":{"message":"\#(long)"}}"#) else {
            Issue.record("a 422 did not refuse")
            return
        }
        #expect(message.count == BlockingHookAnswer.messageCharactersMax)
    }

    @Test func anythingElseIsAFailureTheSettingDecides() {
        let failures: [BlockingHookAnswer] = [
            answer(500, "{}"), answer(302, ""), answer(200, "[1]"), answer(200, "not json"),
            answer(200, #"{"customClaims":{"sub":"x"}}"#), answer(200, #"{"customClaims":[1]}"#),
            answer(200, #"{"disabled":"yes"}"#), answer(200, #"{"emailVerified":1}"#),
            answer(200, #"{"customClaims":{"big":"\#(String(repeating: "b", count: 1000))"}}"#),
            answer(200, #"{"sessionClaims":{"a":1}}"#, .beforeCreate),
        ]
        for failure in failures {
            guard case .failed = failure else {
                Issue.record("\(failure) should be a failure")
                continue
            }
        }
    }

    @Test func configurationIsCheckedKeptAndReadBack() throws {
        var hooks = BlockingHooks()
        try hooks.apply(["triggers": ["beforeCreate": ["functionUri": "https://hooks.example.com/c", "secret": "sixteen-byte-key!", "timeoutSeconds": 3]]], now: 5)
        #expect(hooks.beforeCreate == BlockingHooks.Trigger(url: "https://hooks.example.com/c", secret: "sixteen-byte-key!", timeoutSeconds: 3, updateTime: 5))
        // A change without a secret keeps the one the hook had.
        try hooks.apply(["triggers": ["beforeCreate": ["functionUri": "https://hooks.example.com/d", "failOpen": true]]], now: 6)
        #expect(hooks.beforeCreate?.secret == "sixteen-byte-key!" && hooks.beforeCreate?.failOpen == true && hooks.beforeCreate?.timeoutSeconds == 7)
        #expect(BlockingHooks(storedJSON: hooks.storedJSON) == hooks)
        for bad: [String: Any] in [
            ["triggers": ["beforeSignIn": ["functionUri": "ftp://x", "secret": "sixteen-byte-key!"]]],
            ["triggers": ["beforeSignIn": ["functionUri": "https://x", "secret": "too short"]]],
            ["triggers": ["beforeSignIn": ["functionUri": "https://x", "secret": "sixteen-byte-key!", "timeoutSeconds": 0]]],
            ["triggers": ["beforeSignIn": ["functionUri": "https://x", "secret": "sixteen-byte-key!", "failOpen": "no"]]],
            ["triggers": ["afterSignIn": ["functionUri": "https://x", "secret": "sixteen-byte-key!"]]], ["triggers": 1],
        ] {
            var copy = hooks
            #expect(throws: AuthError.self) { try copy.apply(bad, now: 7) }
        }
        try hooks.apply(["triggers": ["beforeCreate": ["functionUri": ""]]], now: 8)
        #expect(hooks == BlockingHooks())
    }
}
