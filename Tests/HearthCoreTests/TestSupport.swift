@testable import HearthCore
import HearthSupport

/// Builds an object node from pairs (empty values dropped), for tests that do not parse JSON.
func object(_ pairs: [(String, Node)]) -> Node {
    var map = ChildrenMap()
    for (key, value) in pairs where !value.isEmpty { map[ChildKey(key)] = value }
    return Node(children: map)
}

/// Random tests replay the same way every run (the seed is offset so seed 0 is not all zeros).
struct SeededGenerator: RandomNumberGenerator {
    private var base: SplitMix64
    init(seed: UInt64) { base = SplitMix64(seed: seed &+ 0x9E37_79B9_7F4A_7C15) }
    mutating func next() -> UInt64 { base.next() }
}
