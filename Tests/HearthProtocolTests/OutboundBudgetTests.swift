import Testing

import HearthProtocol

@Test func oneLargeMessageDoesNotPutAConnectionOverItsBudget() {
    var budget = OutboundBudget(limitBytes: 100)
    #expect(!budget.isOver(queuedBytes: 0))
    budget.willQueue(messageBytes: 5_000, queuedBytes: 0)  // a big first snapshot
    #expect(!budget.isOver(queuedBytes: 5_000))  // so the `ok` after it is sent
    budget.willQueue(messageBytes: 40, queuedBytes: 5_000)
    #expect(!budget.isOver(queuedBytes: 5_040))
    // More than the budget besides the snapshot: too slow.
    #expect(budget.isOver(queuedBytes: 5_101))
    #expect(budget.isOverSoftLimit(queuedBytes: 5_026))
    #expect(!budget.isOverSoftLimit(queuedBytes: 5_025))
}

@Test func theLargestMessageIsForgottenOnceTheQueueHasDrained() {
    var budget = OutboundBudget(limitBytes: 100)
    budget.willQueue(messageBytes: 5_000, queuedBytes: 0)
    budget.willQueue(messageBytes: 10, queuedBytes: 0)  // drained in between
    #expect(budget.largestMessageBytes == 10)
    #expect(budget.isOver(queuedBytes: 200))
}

@Test func aClientThatNeverReadsPinsAtMostTheBudgetAndTwoLargeMessages() {
    var budget = OutboundBudget(limitBytes: 100)
    var queued = 0
    var accepted = 0
    for _ in 0..<1_000 {
        if budget.isOver(queuedBytes: queued) { break }
        budget.willQueue(messageBytes: 60, queuedBytes: queued)
        queued += 60
        accepted += 1
    }
    #expect(queued <= 100 + 2 * 60)
    #expect(accepted < 1_000)
}
