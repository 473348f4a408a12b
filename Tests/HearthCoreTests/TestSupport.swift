@testable import HearthCore

/// Builds an object node from pairs (empty values dropped), for tests that do not parse JSON.
func object(_ pairs: [(String, Node)]) -> Node {
    var map = ChildrenMap()
    for (key, value) in pairs where !value.isEmpty { map[ChildKey(key)] = value }
    return Node(children: map)
}

/// A small deterministic generator so random tests replay the same way every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
