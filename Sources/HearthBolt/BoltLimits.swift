/// Bounds on what one compilation may build, so hostile or mistaken input gets an error instead of
/// exhausting the stack or memory. Real rule sets stay far below each of them.
public enum BoltLimits {
    /// How deeply parentheses, calls, unary operators, generic parameters and nested paths may nest in the
    /// source. The parser recurses once per level; 256 keeps that well inside a thread's stack.
    public static let sourceNestingMax = 256

    /// How tall an expression tree may become, in source or after functions are inlined. Every later stage
    /// (evaluation, printing) recurses once per level.
    public static let expressionHeightMax = 1024

    /// How many function calls one compilation may inline. Functions are macros, so a chain of functions
    /// that each call the next twice doubles the output per link; this stops that before it eats memory.
    public static let inlinedCallsMax = 100_000

    /// How deeply type validators may nest (a property's type inside its owner's, a base type under its
    /// derived type). Firebase paths have at most 32 levels, so deeper validators could never apply.
    public static let typeNestingMax = 128

    /// How many locations (rule keys and child locations) one type's validator may hold once its
    /// properties' types are expanded into it. A type whose two properties are of the next type, n deep,
    /// expands to 2^n locations from a few hundred bytes of source (19 levels took gigabytes); the rules
    /// it would print could never load anyway (256 KB of rules is about 10,000 locations).
    public static let validatorLocationsMax = 50_000

    /// The most Bolt source one compilation reads, the size JSON rules are limited to.
    public static let sourceBytesMax = 256 * 1024
}
