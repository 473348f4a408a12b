/// Every parser that reads a client's bytes, as a function of those bytes: the entry points of the
/// fuzzers (`make fuzz`, built from `Fuzz/` with libFuzzer and AddressSanitizer) and of the corpus
/// replay in `swift test`, which runs every saved input, crashes found earlier included, through the
/// same functions on every build.
///
/// A target must never crash, trap or hang on any input; where an input is accepted, it also checks a
/// property that must hold (a JSON document written back parses to the same text, say), so the
/// fuzzer finds wrong answers as well as crashes.
///
///     FuzzTarget.named("json")?.run(Array(#"{"a":1}"#.utf8))
public struct FuzzTarget: Sendable {
    public let name: String
    /// What the input bytes are, for the seed corpus's README and `hearth-fuzz --list`.
    public let input: String
    public let run: @Sendable ([UInt8]) -> Void

    public static let all: [FuzzTarget] = [
        JSONFuzzing.target, RESTFuzzing.target, RealtimeFuzzing.target, LongPollFuzzing.target,
        HTTPFramingFuzzing.target, TokenFuzzing.target, AuthFuzzing.target, RulesFuzzing.target, BoltFuzzing.target,
        StaticPathFuzzing.target, ForwardedFuzzing.target, IdentityProviderFuzzing.target, IdentityProviderConfigFuzzing.target,
        FeedEntryFuzzing.target, HooksDocumentFuzzing.target, FeedEventFuzzing.target, EventStreamFuzzing.target,
        BlockingAnswerFuzzing.target, BlockingConfigFuzzing.target, FeedPageFuzzing.target,
    ]

    public static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}

/// A property a target checks failed: a wrong answer, not a crash. Stops the process, so the fuzzer
/// saves the input like a crash.
func fuzzCheck(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    if !condition { fatalError("fuzz property failed: \(message())", file: file, line: line) }
}

extension Array where Element == UInt8 {
    /// The input split at its first `separator`: a header part and the rest.
    func splitOnce(at separator: UInt8) -> (head: ArraySlice<UInt8>, rest: ArraySlice<UInt8>) {
        guard let index = firstIndex(of: separator) else { return (self[...], []) }
        return (self[..<index], self[(index + 1)...])
    }
}
