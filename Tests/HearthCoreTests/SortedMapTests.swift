import Testing
@testable import HearthCore

struct SortedMapTests {
    @Test("Random inserts and removes agree with a sorted reference, with ranks and invariants intact")
    func randomOperationsMatchReference() {
        var random = SeededGenerator(seed: 42)
        var map = SortedMap<Int, Int>()
        var reference: [Int: Int] = [:]
        var snapshots: [(SortedMap<Int, Int>, [Int: Int])] = []
        for step in 0..<20_000 {
            let key = Int.random(in: 0..<3000, using: &random)
            if Bool.random(using: &random) || reference.count < 100 {
                #expect(map.insert(step, for: key) == reference.updateValue(step, forKey: key))
            } else {
                #expect(map.removeValue(for: key) == reference.removeValue(forKey: key))
            }
            if step % 2000 == 0 { snapshots.append((map, reference)) }
        }
        map.checkInvariants()
        let sortedKeys = reference.keys.sorted()
        #expect(map.count == reference.count)
        #expect(map.keys == sortedKeys)
        for (rank, key) in sortedKeys.enumerated() where rank % 37 == 0 {
            #expect(map.element(atRank: rank).key == key)
            #expect(map.rank(of: key) == rank)
            #expect(map[key] == reference[key])
        }
        // Snapshots taken along the way were never changed by later writes.
        for (snapshot, expected) in snapshots {
            snapshot.checkInvariants()
            #expect(snapshot.keys == expected.keys.sorted())
        }
    }

    @Test func bulkBuildIsBalancedForEverySize() {
        for n in [0, 1, 31, 32, 33, 100, 1089, 1090, 5000, 40_000] {
            let map = SortedMap<Int, Bool>(sortedUniqueElements: (0..<n).map { ($0, true) })
            map.checkInvariants()
            #expect(map.count == n)
            if n > 0 { #expect(map.element(atRank: n / 2).key == n / 2) }
            var copy = map
            for k in stride(from: 0, to: n, by: 3) { copy.removeValue(for: k) }
            copy.checkInvariants()
            #expect(copy.count == n - (n + 2) / 3)
            #expect(map.count == n)
        }
    }

    @Test func forEachFromRankAndReversedVisitInOrder() {
        let map = SortedMap<Int, Int>(sortedUniqueElements: (0..<2000).map { ($0 * 2, $0) })
        var forward: [Int] = []
        map.forEach(fromRank: 1500) { key, _ in forward.append(key); return forward.count < 10 }
        #expect(forward == Array(stride(from: 3000, to: 3020, by: 2)))
        var backward: [Int] = []
        map.forEachReversed(fromRank: 1999) { key, _ in backward.append(key); return true }
        #expect(backward == (0..<2000).reversed().map { $0 * 2 })
        #expect(map.rank { $0 < 1001 ? -1 : 1 } == 501)
    }
}
