import HearthBolt
import HearthCore
import HearthRules

/// The Bolt compiler: Bolt source as `hearth rules compile|deploy` reads it. Its output is JSON with
/// the rules under `rules`, which the rules engine then reads (and may refuse: like firebase-bolt, the
/// compiler passes expressions such as regular expressions through unchecked, so deploying is where
/// they are judged).
///
/// Input: Bolt source.
enum BoltFuzzing {
    static let target = FuzzTarget(name: "bolt", input: "Bolt rules source", run: run)

    static func run(_ bytes: [UInt8]) {
        guard let json = try? BoltCompiler.compile(source: String(decoding: bytes, as: UTF8.self)) else { return }
        // `{"rules": {}}` is a tree with nothing in it: the key itself is checked in the text.
        fuzzCheck((try? Node(json: json)) != nil && json.hasPrefix("{\n  \"rules\": "), "Bolt output is not rules JSON: \(json.prefix(300))")
        _ = try? RuleSet(source: json)
    }
}
