import HearthCore
import HearthRules

/// The security rules language: rules JSON as uploaded (`PUT /.settings/rules.json`), compiled, then
/// evaluated for reads and writes against a small tree, signed in and out.
///
/// Input: the rules source.
enum RulesFuzzing {
    static let target = FuzzTarget(name: "rules", input: "security rules source (JSON with comments)", run: run)

    static let root = (try? Node(json: #"{"users":{"ada":{"name":"Ada","age":36,"tags":{"a":true}}},"n":5,"s":"text"}"#)) ?? .empty
    static let auth = (try? Node(json: #"{"uid":"ada","provider":"password","token":{"email":"a@b.c","exp":1800003600}}"#)) ?? .empty

    static func run(_ bytes: [UInt8]) {
        guard let rules = try? RuleSet(source: String(decoding: bytes, as: UTF8.self)) else { return }
        let now: Int64 = 1_800_000_000_000
        for path in [Path(""), Path("users/ada"), Path("users/ada/name"), Path("n"), Path("users/bob/x")] {
            for signedIn in [auth, nil] {
                _ = rules.canRead(at: path, root: root, auth: signedIn, now: now, query: nil as QueryParams?)
                for value in [Node("new"), Node(Int64.max), Node(-0.5), .empty, root] {
                    _ = rules.canWrite(at: path, newValue: value, root: root, auth: signedIn, now: now)
                }
            }
        }
    }
}
