/// A location in the tree: keys from the root, written `a/b/c`.
///
/// Parsing splits on `/` and drops empty segments, as every Firebase client does (`/a//b/` is
/// `a/b`; the root is `""` or `/`). Parsing does not validate: call `validate(forWrite:)` or use
/// `Path(validating:)` where user input must follow Firebase's key rules.
///
///     Path("/users//ada/") == Path(["users", "ada"])   // true
public struct Path: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var keys: [ChildKey]

    public static let root = Path([ChildKey]())

    public init(_ keys: [ChildKey]) { self.keys = keys }

    public init(_ string: String) {
        // Splits the UTF-8 bytes at 0x2F, as Firebase's clients split code units at '/' (never a
        // byte inside a multi-byte character). `String.split` on a Character walks grapheme
        // clusters: most of the parse of a short path under perf.
        var text = string
        keys = text.withUTF8 { bytes in
            var keys: [ChildKey] = []
            var start = 0
            for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: "/") {
                if index > start {
                    keys.append(ChildKey(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)))
                }
                start = index + 1
            }
            return keys
        }
    }

    public init(stringLiteral value: String) { self.init(value) }

    public var count: Int { keys.count }
    public var isRoot: Bool { keys.isEmpty }
    public var first: ChildKey? { keys.first }
    public var last: ChildKey? { keys.last }

    /// The path without its last key; the root's parent is nil.
    public var parent: Path? { keys.isEmpty ? nil : Path(Array(keys.dropLast())) }

    /// `a/b` as the wire and REST write it: no leading slash, `""` for the root.
    public var description: String { keys.map(\.string).joined(separator: "/") }

    /// `/a/b`, the form with a leading slash (`/` for the root).
    public var slashed: String { "/" + description }

    public func appending(_ key: ChildKey) -> Path { Path(keys + [key]) }
    public func appending(path: Path) -> Path { Path(keys + path.keys) }

    /// True when `self` is `other` or lies above it.
    public func contains(_ other: Path) -> Bool {
        guard keys.count <= other.keys.count else { return false }
        for i in keys.indices where keys[i] != other.keys[i] { return false }
        return true
    }

    /// The part of `other` below `self`, when `self` contains `other`.
    public func relative(to ancestor: Path) -> Path? {
        guard ancestor.contains(self) else { return nil }
        return Path(Array(keys.dropFirst(ancestor.count)))
    }

    /// True when one path contains the other: a write at one can change what is at the other.
    public func overlaps(_ other: Path) -> Bool { contains(other) || other.contains(self) }

    /// Two of `paths` that overlap (one is the other or lies under it), or nil when none do. Sorts
    /// instead of comparing every pair: a path sorts before its descendants, and anything sorting
    /// between them lies under it too, so an overlap always shows between neighbours. O(n log n): a
    /// multi-path update may carry tens of thousands of keys (pairwise, 8,000 took 28 s).
    public static func firstOverlap(in paths: [Path]) -> (Path, Path)? {
        let sorted = paths.sorted()
        for index in sorted.indices.dropFirst() where sorted[index - 1].contains(sorted[index]) {
            return (sorted[index - 1], sorted[index])
        }
        return nil
    }

    /// The paths of `paths` that no other one contains, sorted, each once: the locations a set of writes
    /// replaced, as few and as high as they are. O(n log n), for the reason above.
    public static func outermost(_ paths: [Path]) -> [Path] {
        var kept: [Path] = []
        for path in paths.sorted() where !(kept.last?.contains(path) ?? false) { kept.append(path) }
        return kept
    }
}

extension Path: Comparable {
    /// Paths order key by key in Firebase key order; a parent sorts before its descendants.
    public static func < (lhs: Path, rhs: Path) -> Bool {
        for (a, b) in zip(lhs.keys, rhs.keys) where a != b { return a < b }
        return lhs.keys.count < rhs.keys.count
    }
}
