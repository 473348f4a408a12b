/// Every size and depth limit HearthCore enforces, in one place, each with the reason for it.
///
/// The Firebase values are the ones the official clients enforce themselves
/// (docs/protocol.md §5.2; firebase.google.com/docs/database/usage/limits), so a write that an SDK
/// accepts is never rejected here and a hostile client cannot go beyond what an SDK could send.
public enum Limits {
    /// Longest key, in UTF-8 bytes. Firebase documents "key length 768 bytes"; a longer key could
    /// never be written by an SDK.
    public static let keyLengthBytesMax = 768

    /// Longest path, in UTF-8 bytes, counting one separator per segment. The JS SDK rejects paths
    /// over 768 bytes (`MAX_PATH_LENGTH_BYTES`), so stored data never needs more.
    public static let pathLengthBytesMax = 768

    /// Deepest location, in keys from the root, counting keys inside written data. Firebase's
    /// documented depth limit (`MAX_PATH_DEPTH = 32` in the JS SDK).
    public static let pathDepthMax = 32

    /// Largest string leaf, in UTF-8 bytes: 10 MiB, the JS SDK's `MAX_LEAF_SIZE_`.
    public static let stringLengthBytesMax = 10 * 1024 * 1024

    /// Deepest JSON nesting the parser follows before rejecting the document. Data can only be
    /// `pathDepthMax` deep, but a payload nests a few levels more around the data (export
    /// form `{".value": …}`, a wire envelope `{"d":{"b":{"d": …}}}`), so the parser allows
    /// a margin; anything deeper is hostile and would otherwise cost stack.
    public static let jsonNestingDepthMax = pathDepthMax + 8

    /// Largest integer key treated as a number in key order: keys that parse as 32-bit signed
    /// integers sort numerically before all other keys (JS SDK `tryParseInt`, docs/protocol.md §5.6).
    public static let integerKeyRange: ClosedRange<Int64> = Int64(Int32.min)...Int64(Int32.max)

    /// Longest write ID (HearthClient's `wid`, docs/protocol.md §2.6.1), in bytes of printable ASCII.
    /// HearthClient's are about 30 (a random installation ID and a counter).
    public static let writeIDBytesMax = 64

    /// Write IDs a namespace remembers as applied, newest kept: a resent write whose ID is among them is
    /// acknowledged without being applied again. A client resends what it had in flight when it lost
    /// its connection or was killed; 100,000 IDs (about 5 MB of memory and file) cover every client's
    /// writes of the last minutes of a busy namespace (ws.writes makes about 8,000 a second on 2 cores).
    public static let rememberedWriteIDsMax = 100_000
}
