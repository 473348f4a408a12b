import HearthCore
import HearthStorage
import HearthTriggers

/// A location's history answered from the feed's location index (``FeedLocationCandidates``) instead of
/// a scan: the entries written after the index's end, then the indexed candidates, newest first, each
/// turned into its changes at the location until `limit` are found. Decided as a value; the endpoint
/// reads the entries.
struct IndexedHistory {
    let location: Path
    let limit: Int
    let before: Int64
    let candidates: FeedLocationCandidates
    private(set) var found: [LocationChange] = []
    private(set) var scanned = 0

    init(location: Path, limit: Int, before: Int64, candidates: FeedLocationCandidates) {
        self.location = location
        self.limit = limit
        self.before = before
        self.candidates = candidates
    }

    /// Takes the entries after the index's end (`tail`) and the candidates' entries, and returns where an
    /// older page starts (nil: none left).
    mutating func answer(tail: [ChangeFeedPage.Entry], indexed: [ChangeFeedPage.Entry]) -> Int64? {
        let wanted = Set(candidates.positions)
        let entries = (tail.filter { $0.position > candidates.indexedThrough && $0.position < before } + indexed.filter { wanted.contains($0.position) })
            .sorted { $0.position > $1.position }
        for entry in entries {
            scanned += 1
            var served: [UInt8] = []
            entry.appendServed(to: &served)
            guard let parsed = try? FeedEntry(json: served) else { continue }
            found += parsed.history(at: location).reversed()
            if found.count >= limit { return entry.position }
        }
        // Fewer candidates than asked for: the index holds no older ones.
        return candidates.positions.count < limit ? nil : candidates.positions.last
    }
}
