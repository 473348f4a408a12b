import HearthProtocol
import Testing

/// A realtime connection's hold on the memory budget, shared by WebSocket and long-poll connections.
@Suite struct HeldMessageBytesTests {
    /// A budget of `bytesMax`, as the transport's request-body budget answers.
    final class Budget: HeldMemoryBudget {
        let bytesMax: Int
        var taken = 0
        init(bytesMax: Int) { self.bytesMax = bytesMax }
        func hold(_ bytes: Int) -> BudgetRefusal? {
            if bytes > bytesMax { return .tooLarge(bytesMax: bytesMax) }
            if taken + bytes > bytesMax { return .busy(bytesInFlight: taken, bytesMax: bytesMax) }
            taken += bytes
            return nil
        }
        func release(_ bytes: Int) { taken -= bytes }
    }

    let unbudgeted = ServerLimits.realtimeMessageBytesUnbudgeted

    @Test func smallMessagesTakeNothingAndLargeOnesTheirSizePastTheAllowance() {
        let budget = Budget(bytesMax: 1 << 20)
        var held = HeldMessageBytes()
        #expect(held.hold(unbudgeted, from: budget) == nil && budget.taken == 0)
        #expect(held.hold(unbudgeted + 1_000, from: budget) == nil && budget.taken == 1_000)
        #expect(held.hold(unbudgeted + 5_000, from: budget) == nil && budget.taken == 5_000)
        // The message handled, what the next one holds is less: the rest goes back.
        #expect(held.hold(unbudgeted + 200, from: budget) == nil && budget.taken == 200)
        held.release(to: budget)
        #expect(budget.taken == 0 && held.budgeted == 0)
    }

    @Test func aRefusalSaysWhetherItWillEverFitAndGivesEverythingBack() {
        let budget = Budget(bytesMax: 1 << 20)
        var other = HeldMessageBytes()
        #expect(other.hold(unbudgeted + 900_000, from: budget) == nil)
        var held = HeldMessageBytes()
        #expect(held.hold(unbudgeted + 100_000, from: budget) == nil)
        let busy = held.hold(unbudgeted + 200_000, from: budget)
        #expect(busy == .busy(bytesInFlight: 1_000_000, bytesMax: 1 << 20))
        #expect(busy?.reason.contains("retry") == true && busy?.detail == "1000000 of 1048576 bytes held")
        #expect(held.budgeted == 0 && budget.taken == 900_000)
        let never = held.hold(unbudgeted + (2 << 20), from: budget)
        #expect(never == .tooLarge(bytesMax: 1 << 20))
        #expect(never?.reason.contains("larger than the server takes at once") == true && never?.detail == nil)
        #expect(budget.taken == 900_000)
    }
}
