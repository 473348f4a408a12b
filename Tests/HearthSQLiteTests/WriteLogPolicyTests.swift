@testable import HearthSQLite
import Testing

/// Feeds `windows` windows of commits, each writing `pagesPerOperation` pages per operation (64 each).
private func feed(_ policy: inout WriteLogPolicy, windows: Int, pagesPerOperation: Double) {
    for _ in 0..<(windows * WriteLogPolicy.windowCommits) {
        policy.committed(operations: 64, pages: Int((64 * pagesPerOperation).rounded()))
    }
}

@Test func theLogIsChosenWhenCommitsSpreadOverPagesAndKeptWhileItWritesFewer() {
    var policy = WriteLogPolicy(.adaptive)
    #expect(!policy.usesLog)  // starts with direct commits
    feed(&policy, windows: 1, pagesPerOperation: 1.0)  // every write on its own page
    #expect(policy.usesLog)
    feed(&policy, windows: 3, pagesPerOperation: 0.02)  // the windows that fill the log are not judged
    feed(&policy, windows: 3, pagesPerOperation: 0.5)  // twice fewer pages: the log stays
    #expect(policy.usesLog)
    feed(&policy, windows: 1, pagesPerOperation: 0.8)  // barely fewer: back to direct commits
    #expect(!policy.usesLog)
    feed(&policy, windows: 4096 / WriteLogPolicy.windowCommits - 1, pagesPerOperation: 1.0)
    #expect(!policy.usesLog)  // held for `holdCommits`
    feed(&policy, windows: 2, pagesPerOperation: 1.0)
    #expect(policy.usesLog)  // then tried again
}

@Test func aSmallWorkingSetNeverUsesTheLog() {
    var policy = WriteLogPolicy(.adaptive)
    feed(&policy, windows: 40, pagesPerOperation: 2.0 / 64)  // 64 clients rewriting their own paths
    #expect(!policy.usesLog)
}

@Test func alwaysAndNeverDoNotMeasure() {
    var always = WriteLogPolicy(.always), never = WriteLogPolicy(.never)
    feed(&always, windows: 3, pagesPerOperation: 0.01)
    feed(&never, windows: 3, pagesPerOperation: 5)
    #expect(always.usesLog)
    #expect(!never.usesLog)
}
