import Testing

@testable import HearthTransport

@Suite struct RequestBodyBudgetTests {
    @Test func takesBodiesUntilFullThenSaysBusyUntilOneIsGivenBack() {
        var budget = RequestBodyBudget(bytesMax: 100)
        #expect(budget.reserve(60) == .granted)
        #expect(budget.reserve(40) == .granted)
        #expect(budget.reserve(1) == .busy(bytesInFlight: 100, bytesMax: 100))
        budget.release(40)
        #expect(budget.reserve(30) == .granted)
        #expect(budget.bytesInFlight == 90)
    }

    @Test func aBodyLargerThanTheWholeBudgetNeverFits() {
        var budget = RequestBodyBudget(bytesMax: 100)
        #expect(budget.reserve(101) == .tooLarge(bytesMax: 100))
        #expect(budget.bytesInFlight == 0)
    }

    @Test func withoutALimitEveryBodyIsTakenAndCounted() {
        var budget = RequestBodyBudget(bytesMax: nil)
        #expect(budget.reserve(1 << 40) == .granted)
        budget.release(1 << 40)
        #expect(budget.bytesInFlight == 0)
    }
}
