import HearthCore
import HearthProtocol
import HearthRules

/// The console's rules simulator: a read, set or update at a path by a signed-in uid (with extra
/// claims) or by nobody, decided against the namespace's tree of the moment without writing anything.
/// Answers as the server would, with the rule that decided and its line in the source.
struct RulesSimulation {
    enum Operation: String { case read, set, update }

    var operation: Operation
    var path: Path
    /// nil: signed out.
    var uid: String?
    var claims: Node = .empty
    var value: Node = .empty

    /// The rules' `auth`: what a password sign-in of `uid` would give, with `claims` added to the token.
    var auth: Node? {
        guard let uid else { return nil }
        var token = claims.hasChildren ? claims : .empty
        token.set(Path("sub"), to: Node(uid))
        if token.child(at: Path("firebase/sign_in_provider")).isEmpty {
            token.set(Path("firebase/sign_in_provider"), to: Node("password"))
        }
        return AuthVariable.from(claims: token)
    }

    func decide(_ rules: RuleSet, root: Node, now: Int64) -> RuleDecision {
        switch operation {
        case .read:
            return rules.canRead(at: path, root: root, auth: auth, now: now, query: nil)
        case .set:
            return rules.canWrite(at: path, newValue: value, root: root, auth: auth, now: now)
        case .update:
            var children: [(Path, Node)] = []
            value.children.forEach { key, child in
                children.append((Path(key.string), child))
                return true
            }
            return rules.canUpdate(at: path, children: children, root: root, auth: auth, now: now)
        }
    }

    /// The line (from 1) of a JSON rules `source` where `rule` is written: the keys of its pattern
    /// looked for in order under `"rules"`, then its kind. nil when they cannot be found (Bolt, or a
    /// text laid out unusually).
    static func line(of rule: RuleDecision.Rule, in source: String) -> Int? {
        let text = Array(source.utf8)
        var position = 0
        func find(_ key: String) -> Bool {
            let needle = Array(Node(key).json().utf8)
            guard needle.count <= text.count else { return false }
            var index = position
            while index + needle.count <= text.count {
                if text[index] == needle[0] && Array(text[index..<index + needle.count]) == needle {
                    position = index + needle.count
                    return true
                }
                index += 1
            }
            return false
        }
        guard find("rules") else { return nil }
        for key in Path(rule.pattern).keys where !find(key.string) { return nil }
        guard find(rule.kind.rawValue) else { return nil }
        return text[..<position].reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
    }
}
