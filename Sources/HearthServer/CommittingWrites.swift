/// Writes applied and handed to storage whose completion has not yet run on the loop. Loop thread only
/// (the completions that count down run there); a class so write completions can carry it.
final class CommittingWrites: @unchecked Sendable {
    private(set) var count = 0

    func started() { count += 1 }
    func finished() { count -= 1 }
}
