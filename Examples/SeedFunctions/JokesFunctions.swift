import Foundation
import HearthClient
public import HearthFunctions

/// The jokes app's server-side logic (docs/examples.md): vote totals and the top-10 board. Clients only
/// record their own vote at `votes/<uid>/<jokeId>`; the rules keep them from touching the totals.
///
/// Each step is idempotent, so an event handed over twice changes nothing: a vote is mirrored by joke
/// at `voters/<jokeId>/<uid>` (one location per joke, whose events run one at a time, in order), and the
/// total is that location's child count after the write, set, not added.
public enum JokesFunctions {
    public static func register(on functions: Functions) {
        let board = BoardKeeper()
        functions.onValueWritten("/votes/{uid}/{jokeId}", name: "mirrorVote") { event in
            guard let uid = event.params["uid"], let jokeId = event.params["jokeId"] else { return }
            let voted = event.data.after.value as? Bool == true
            try await event.database.reference(withPath: "voters/\(jokeId)/\(uid)").setValue(voted ? true : nil)
        }
        functions.onValueWritten("/voters/{jokeId}", name: "countVotes") { event in
            guard let jokeId = event.params["jokeId"] else { return }
            try await setVotes(Int(event.data.after.childrenCount), of: event.database.reference(withPath: "jokes/\(jokeId)"))
            try await board.refresh(event.database)
        }
        functions.onValueDeleted("/jokes/{jokeId}", name: "forgetJoke") { event in
            guard let jokeId = event.params["jokeId"] else { return }
            try await event.database.reference(withPath: "voters/\(jokeId)").removeValue()
            try await board.refresh(event.database)
        }
    }

    /// Sets the joke's total, unless the joke is gone (a transaction: a count must not bring back a
    /// deleted joke as a bare `{votes: n}`).
    static func setVotes(_ count: Int, of joke: DatabaseReference) async throws {
        _ = try await joke.runTransactionBlock { current in
            guard var fields = current.value as? [String: Any] else { return .success(withValue: current) }
            fields["votes"] = count
            current.value = fields
            return .success(withValue: current)
        }
    }
}

/// The top 10 jokes by votes at `board/<jokeId>` {text, authorName, votes}: read again from the jokes
/// after each change of a total. Rebuilds never overlap; a caller returns once a rebuild that started
/// after it asked has finished (so a handler is done only when the board shows its change).
actor BoardKeeper {
    private var asked = 0
    private var started = 0
    private var running = false
    private var waiting: [(ticket: Int, continuation: CheckedContinuation<Void, any Error>)] = []

    static let size: UInt = 10

    func refresh(_ database: Database) async throws {
        asked += 1
        let ticket = asked
        if !running {
            running = true
            Task { await rebuildWhileAsked(database) }
        }
        try await withCheckedThrowingContinuation { waiting.append((ticket, $0)) }
    }

    private func rebuildWhileAsked(_ database: Database) async {
        while started < asked {
            started = asked
            let result: Result<Void, any Error>
            do {
                try await Self.rebuild(database)
                result = .success(())
            } catch {
                result = .failure(error)
            }
            let done = waiting.filter { $0.ticket <= started }
            waiting.removeAll { $0.ticket <= started }
            for waiter in done { waiter.continuation.resume(with: result) }
        }
        running = false
    }

    private static func rebuild(_ database: Database) async throws {
        let top = try await database.reference(withPath: "jokes").queryOrdered(byChild: "votes").queryLimited(toLast: size).getData()
        var board: [String: Any] = [:]
        for case let joke as DataSnapshot in top.children {
            guard let fields = joke.value as? [String: Any] else { continue }
            board[joke.key] = ["text": fields["text"] ?? "", "authorName": fields["authorName"] ?? NSNull(), "votes": fields["votes"] ?? 0]
        }
        _ = try await database.reference(withPath: "board").setValue(board.isEmpty ? nil : board)
    }
}
