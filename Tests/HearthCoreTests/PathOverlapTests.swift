import HearthCore
import Testing

@Suite struct PathOverlapTests {
    /// Random short paths over a few keys, so overlaps are common.
    static func randomPaths(_ count: Int, using generator: inout some RandomNumberGenerator) -> [Path] {
        let keys = ["a", "b", "c", "1", "10", "-1"]
        return (0..<count).map { _ in
            Path((0..<Int.random(in: 1...3, using: &generator)).map { _ in ChildKey(keys.randomElement(using: &generator)!) })
        }
    }

    @Test func findsAnOverlapExactlyWhenSomePairOverlaps() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let paths = Self.randomPaths(Int.random(in: 0...6, using: &generator), using: &generator)
            var pairwise = false
            for (index, a) in paths.enumerated() {
                for b in paths[(index + 1)...] where a.overlaps(b) { pairwise = true }
            }
            let found = Path.firstOverlap(in: paths)
            #expect((found != nil) == pairwise, "\(paths)")
            if let (a, b) = found { #expect(a.overlaps(b)) }
        }
    }

    @Test func manyDistinctPathsHaveNoOverlap() {
        let paths = (0..<30_000).map { Path("items/k\($0)/v") }
        #expect(Path.firstOverlap(in: paths) == nil)
        #expect(Path.firstOverlap(in: paths + [Path("items/k7")]) != nil)
    }
}
