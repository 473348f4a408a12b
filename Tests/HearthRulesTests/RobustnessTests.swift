import HearthCore
import HearthSupport
import Testing
@testable import HearthRules

/// Bad input gets an error, never a crash or a hang: mutated rules documents either load with a
/// position-free success or throw `RulesError`, and whatever loads can be evaluated.
struct RobustnessTests {
    static let seedRules = #"""
        {
          // comment
          "rules": {
            "rooms": {
              "$room": {
                ".read": "auth != null && data.child('members/' + auth.uid).exists()",
                ".write": "auth.uid == data.child('owner').val() || (data.val() == null && newData.child('owner').val() == auth.uid)",
                ".validate": "newData.hasChildren(['owner', 'name']) && newData.child('name').val().matches(/^[a-z0-9 _-]{1,32}$/i)",
                "name": { ".validate": "newData.isString() && newData.val().length < 100 ? true : false" },
                "count": { ".validate": "newData.isNumber() && newData.val() % 1 === 0 && newData.val() >= -(2 * 3)" },
                "$other": { ".validate": false }
              },
              ".indexOn": ["owner", ".value"]
            },
            "q": { ".read": "query.orderByChild == 'a' && query.limitToFirst <= 10 || root.child('x').getPriority() != null" }
          }
        }
        """#

    @Test func mutatedDocumentsNeverCrash() throws {
        _ = try RuleSet(source: Self.seedRules)  // the seed itself is valid
        let alphabet = Array("{}[]()\"'/\\*.,:;$!=<>&|+-%?0123456789 abcnewDatarootauth\n".unicodeScalars)
        var random = SplitMix64(seed: 5)
        let base = Array(Self.seedRules.unicodeScalars)
        let root = try Node(json: #"{"rooms": {"r1": {"owner": "u1", "name": "x", "members": {"u1": true}}}, "x": 1}"#)
        let auth = try Node(json: #"{"uid": "u1"}"#)
        let room = try Node(json: #"{"owner": "u1", "name": "y", "count": 3}"#)
        var loaded = 0, rejected = 0
        for _ in 0..<1500 {
            var scalars = base
            for _ in 0..<(1 + random.next(below: 4)) {
                let position = random.next(below: scalars.count)
                switch random.next(below: 3) {
                case 0: scalars.remove(at: position)
                case 1: scalars.insert(alphabet[random.next(below: alphabet.count)], at: position)
                default: scalars[position] = alphabet[random.next(below: alphabet.count)]
                }
            }
            let source = String(String.UnicodeScalarView(scalars))
            do throws(RulesError) {
                let rules = try RuleSet(source: source)
                loaded += 1
                _ = rules.canRead(at: "rooms/r1", root: root, auth: auth, now: 1)
                _ = rules.canRead(at: "q", root: root, auth: nil, now: 1, query: RuleQuery(order: .child("a"), limitToFirst: 5))
                _ = rules.canWrite(at: "rooms/r2", newValue: room, root: root, auth: auth, now: 1)
                _ = rules.canUpdate(at: "rooms/r1", children: [("name", Node("z")), ("count", .empty)], root: root, auth: auth, now: 1)
            } catch {
                rejected += 1
                #expect(error.line >= 1 && error.column >= 1)
            }
        }
        #expect(loaded > 0 && rejected > 0)
    }
}
