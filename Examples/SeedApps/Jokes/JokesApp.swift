import Foundation
public import HearthClient
public import SeedTerminal

/// The jokes app on the database: `jokes/<push id>` {text, author, authorName, votes} read newest first,
/// `votes/<uid>/<joke id>: true` for the user's own votes; the totals and `board` (the top 10) are kept
/// by the seed functions (Examples/SeedFunctions, `make functions`), not by clients.
public final class JokesApp: SeedContent, @unchecked Sendable {  // confined to the shell's queue
    public let name = "jokes"
    public let keyHelp = [
        "↑ ↓ j k   select a joke", "n         write a joke (Enter posts it)", "v         vote for the selected joke, or take your vote back",
        "d         delete a joke of yours", "t         the top 10 by votes, or back to the feed",
    ]
    private var model = JokesModel()
    private var user: User?
    private weak var shell: SeedShell?
    private var handles: [(DatabaseQuery, DatabaseHandle)] = []

    public init() {}

    public func attach(user: User, database: Database, shell: SeedShell) {
        self.user = user
        self.shell = shell
        model = JokesModel()
        let feed = database.reference(withPath: "jokes").queryLimited(toLast: 500)
        handles.append((feed, feed.observe(.value, with: { [weak self] snapshot in
            let children = snapshot.children.compactMap { $0 as? DataSnapshot }.map { (key: $0.key, value: $0.value) }
            self?.model.setJokes(children)
            self?.shell?.redraw()
        }, withCancel: { [weak shell] error in shell?.status("The feed is not readable: \(error.localizedDescription)", isError: true) })))
        let board = database.reference(withPath: "board")
        handles.append((board, board.observe(.value) { [weak self] snapshot in
            self?.model.setBoard(snapshot.children.compactMap { $0 as? DataSnapshot }.map { (key: $0.key, value: $0.value) })
            self?.shell?.redraw()
        }))
        let votes = database.reference(withPath: "votes/\(user.uid)")
        handles.append((votes, votes.observe(.value) { [weak self] snapshot in
            self?.model.setVotes(Set((snapshot.value as? [String: Any])?.keys.map { $0 } ?? []))
            self?.shell?.redraw()
        }))
    }

    public func detach() {
        for (query, handle) in handles { query.removeObserver(withHandle: handle) }
        handles = []
        user = nil
        model = JokesModel()
    }

    public func render(width: Int, height: Int) -> (lines: [Line], cursor: (row: Int, column: Int)?) {
        model.render(width: width, height: height, uid: user?.uid ?? "")
    }

    public func handle(_ key: Key) -> Bool {
        guard let user, let shell else { return false }
        let (handled, command) = model.handle(key, uid: user.uid)
        if let command { perform(command, user: user, database: shell.database, shell: shell) }
        return handled
    }

    private func perform(_ command: JokesModel.Command, user: User, database: Database, shell: SeedShell) {
        let uid = user.uid
        switch command {
        case .post(let text):
            let joke: [String: Any] = ["text": text, "author": uid, "authorName": Self.displayName(user), "votes": 0]
            database.reference(withPath: "jokes").childByAutoId().setValue(joke) { error, _ in
                shell.status(error.map { ErrorText.describe($0, serverURL: shell.options.databaseURL) } ?? "Posted.", isError: error != nil)
            }
        case .vote(let jokeID, let up):
            // Only the user's own vote: the seed functions count them into the joke's total.
            database.reference(withPath: "votes/\(uid)/\(jokeID)").setValue(up ? true : nil) { [weak self] error, _ in
                self?.model.voteSettled(jokeID)
                if let error { shell.status(ErrorText.describe(error, serverURL: shell.options.databaseURL), isError: true) } else { shell.redraw() }
            }
        case .delete(let jokeID):
            database.reference(withPath: "jokes/\(jokeID)").removeValue { error, _ in
                shell.status(error.map { ErrorText.describe($0, serverURL: shell.options.databaseURL) } ?? "Deleted.", isError: error != nil)
            }
        }
    }

    /// What others see as the author: the profile name, else the email's local part.
    static func displayName(_ user: User) -> String {
        if let name = user.displayName, !name.isEmpty { return name }
        return user.email.map { String($0.split(separator: "@").first ?? "") } ?? "anonymous"
    }
}
