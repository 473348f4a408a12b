/// How strictly `Node(json:options:)` checks what it reads.
///
/// Syntax is always checked (RFC 8259, no extensions). Firebase's data rules (docs/protocol.md
/// §5.2) are checked only for `.write(at:)`, which is what every client write must use.
///
///     let value = try Node(json: body, options: .init(validation: .write(at: Path("users/ada"))))
public struct JSONParseOptions: Sendable {
    /// Which Firebase rules keys, paths and strings must follow.
    public enum KeyCheck: Sendable, Hashable {
        /// Any syntactically valid JSON: for trusted, already-stored data and conformance suites.
        /// Keys are taken as they are, including empty keys and keys starting with `.`.
        case none
        /// Firebase's write rules for data written at `path`: valid keys (see `KeyValidation`),
        /// depth and path length counted from `path`, strings within `Limits.stringLengthBytesMax`,
        /// and no keys starting with `.` other than `.priority`, `.value` and `.sv`.
        case write(at: Path)
    }

    /// Which rules to check; `.none` by default.
    public var validation: KeyCheck

    /// Options checking `validation`.
    public init(validation: KeyCheck = .none) {
        self.validation = validation
    }
}
