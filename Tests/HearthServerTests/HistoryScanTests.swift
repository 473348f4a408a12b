import HearthCore
@testable import HearthServer
import HearthStorage
import HearthTriggers
import Testing

/// The history's walk down the feed (``HistoryScan``) against a feed held in memory: windows of commits
/// read forward and looked at newest first, pages that stop at `limit`, the retained start, the budget.
struct HistoryScanTests {
    /// Commit `n` (1…) sets /counter to n; every third commit also sets /other.
    static func feed(commits: Int) -> [ChangeFeedPage.Entry] {
        var entries: [ChangeFeedPage.Entry] = []
        for n in 1...commits {
            var index = 0
            func entry(_ path: String, _ value: Int, before: Int) {
                let json = #"{"time":\#(n),"type":"set","path":"\#(path)","data":\#(value),"authType":"admin","protocol":"rest","before":{"\#(path)":\#(before == 0 ? "null" : String(before))}}"#
                entries.append(.init(position: ChangeFeedPosition.of(commit: Int64(n), index: index), json: Array(json.utf8)))
                index += 1
            }
            entry("/counter", n, before: n - 1)
            if n % 3 == 0 { entry("/other", n, before: 0) }
        }
        return entries
    }

    /// Runs the scan against `entries` as an engine would answer its reads; the reads it made.
    static func run(_ scan: inout HistoryScan, _ entries: [ChangeFeedPage.Entry], trimmedThrough: Int64 = 0) -> (next: Int64?, reads: Int) {
        var step = scan.start
        var reads = 0
        while case .read(let after, let limit) = step {
            reads += 1
            let page = entries.filter { $0.position > max(after, trimmedThrough) }.prefix(limit)
            step = scan.take(ChangeFeedPage(entries: Array(page), trimmedThrough: trimmedThrough, head: entries.last?.position ?? 0))
        }
        guard case .answer(let next) = step else { return (nil, reads) }
        return (next, reads)
    }

    @Test func pagesGoNewestFirstAcrossWindowsDownToTheStart() {
        let entries = Self.feed(commits: 700)  // three windows of 256 commits
        var first = HistoryScan(location: Path("counter"), limit: 300, budget: 100_000, before: .max)
        let (next, _) = Self.run(&first, entries)
        #expect(first.found.map { $0.after } == (401...700).reversed().map { Node($0) })
        #expect(first.found.first?.before == Node(699))
        var rest = HistoryScan(location: Path("counter"), limit: 1_000, budget: 100_000, before: next ?? 0)
        let (end, _) = Self.run(&rest, entries)
        #expect(rest.found.map { $0.after } == (1...400).reversed().map { Node($0) })
        #expect(end == nil, "the start of the feed was reached")
    }

    @Test func aLocationNothingTouchedScansEverythingOnceAndSaysSo() {
        let entries = Self.feed(commits: 300)
        var scan = HistoryScan(location: Path("nowhere"), limit: 10, budget: 100_000, before: .max)
        let (next, _) = Self.run(&scan, entries)
        #expect(scan.found.isEmpty && next == nil && scan.scanned == entries.count)
    }

    @Test func theBudgetAnswersWithWhereToGoOn() {
        let entries = Self.feed(commits: 700)
        var scan = HistoryScan(location: Path("nowhere"), limit: 10, budget: 100, before: .max)
        let (next, _) = Self.run(&scan, entries)
        #expect(next != nil && scan.scanned < entries.count)
        let windowStart: Int64 = 700 - 256 + 1
        #expect(next.map { ChangeFeedPosition.commit(of: $0) } == windowStart && next.map { $0 % 8192 } == 0, "on from the window's first commit")
    }

    /// Commits of thousands of writes (a burst grouped into few commits) at the top of the feed: each
    /// page of the history is the newest changes below where it starts, and paging on from `next` gives
    /// every change once, in order, however few reads a request may make.
    @Test func denseCommitsAreReadAsSmallerWindowsAndPagingSkipsNothing() {
        var entries: [ChangeFeedPage.Entry] = []
        for n in 1...300 {
            let count = n > 290 ? 8_000 : 1
            for index in 0..<count {
                let path = index == 0 ? "/counter" : "/filler/f\(index)"
                let json = #"{"time":\#(n),"type":"set","path":"\#(path)","data":\#(n),"authType":"admin","protocol":"rest","before":{"\#(path)":null}}"#
                entries.append(.init(position: ChangeFeedPosition.of(commit: Int64(n), index: index), json: Array(json.utf8)))
            }
        }
        for readsMax in [30, 400] {
            var seen: [Node] = []
            var before = Int64.max
            var requests = 0
            while requests < 100 {
                requests += 1
                var scan = HistoryScan(location: Path("counter"), limit: 25, budget: 100_000, before: before, readsMax: readsMax)
                let (next, reads) = Self.run(&scan, entries)
                #expect(reads <= readsMax + 1)
                seen += scan.found.map(\.after)
                guard let next else { break }
                before = next
            }
            #expect(seen == (1...300).reversed().map { Node($0) }, "reads at most \(readsMax) a request")
        }
    }

    @Test func retentionEndsTheWalk() {
        let entries = Self.feed(commits: 50)
        let trimmed = ChangeFeedPosition.of(commit: 20, index: 1)
        var scan = HistoryScan(location: Path("counter"), limit: 1_000, budget: 100_000, before: .max)
        let (next, _) = Self.run(&scan, entries, trimmedThrough: trimmed)
        #expect(scan.found.map { $0.after } == (21...50).reversed().map { Node($0) } && next == nil)
        #expect(scan.trimmedThrough == trimmed)
    }
}

/// A feed entry's changes at a location (``FeedEntry/history(at:)``).
struct LocationHistoryTests {
    func entry(_ json: String) throws -> FeedEntry { try FeedEntry(json: Array(#"{"position":8192,"time":1,\#(json)}"#.utf8)) }

    @Test func writesAboveAreNarrowedBelowAreShownWhereMadeAndNoChangeIsNothing() throws {
        let above = try entry(#""type":"set","path":"/jokes","data":{"j1":{"t":"b"},"j2":1},"before":{"/jokes":{"j1":{"t":"a"}}}"#)
        #expect(above.history(at: Path("jokes/j1")).map { [$0.path.slashed, $0.before.json(), $0.after.json()] } == [["/jokes/j1", #"{"t":"a"}"#, #"{"t":"b"}"#]])
        #expect(above.history(at: Path("jokes/j3")).isEmpty, "unchanged there")
        let below = try entry(#""type":"update","path":"/jokes","data":{"j1/t":"c","j2":null},"before":{"/jokes/j1/t":"b","/jokes/j2":1}"#)
        #expect(below.history(at: Path("jokes/j1")).map(\.path.slashed) == ["/jokes/j1/t"])
        #expect(below.history(at: Path("jokes")).map(\.path.slashed) == ["/jokes/j1/t", "/jokes/j2"])
        #expect(below.history(at: Path("jokes/j2")).map { $0.after.isEmpty } == [true])
    }
}
