import Foundation
public import SeedTerminal

/// A joke in the feed.
public struct Joke: Equatable, Sendable {
    public var id: String
    public var text: String
    public var author: String
    public var authorName: String?
    public var votes: Int

    /// A joke from its stored value; nil when the value is not one.
    public init?(id: String, value: Any?) {
        guard let fields = value as? [String: Any], let text = fields["text"] as? String, let author = fields["author"] as? String else {
            return nil
        }
        self.id = id
        self.text = text
        self.author = author
        authorName = fields["authorName"] as? String
        votes = (fields["votes"] as? NSNumber)?.intValue ?? 0
    }

    public init(id: String, text: String, author: String, authorName: String? = nil, votes: Int = 0) {
        (self.id, self.text, self.author, self.authorName, self.votes) = (id, text, author, authorName, votes)
    }
}

/// The jokes app's state (tutorials 000 and 001): the feed newest first, the user's votes, the
/// selection, and the joke being written. Keys become commands; the shell performs them.
public struct JokesModel: Equatable, Sendable {
    public private(set) var jokes: [Joke] = []
    public private(set) var myVotes: Set<String> = []
    /// Votes toggled but not yet confirmed by the database: a second press waits for the first.
    public private(set) var pendingVotes: Set<String> = []
    public private(set) var selection = 0
    public private(set) var composer: TextField?
    public var loaded = false
    /// The top 10 by votes (`board`, kept by the seed functions), most first; shown instead of the feed
    /// while `showingBoard`.
    public private(set) var board: [Joke] = []
    public private(set) var showingBoard = false

    public enum Command: Equatable, Sendable {
        case post(text: String)
        /// Vote (`up`) or take the vote back.
        case vote(jokeID: String, up: Bool)
        case delete(jokeID: String)
    }

    public init() {}

    /// The feed's children (push IDs sort by time): newest first; the selection stays on its joke.
    public mutating func setJokes(_ children: [(key: String, value: Any?)]) {
        let selected = jokes.indices.contains(selection) ? jokes[selection].id : nil
        jokes = children.compactMap { Joke(id: $0.key, value: $0.value) }.sorted { $0.id > $1.id }
        if let selected, let index = jokes.firstIndex(where: { $0.id == selected }) { selection = index }
        selection = min(selection, max(0, jokes.count - 1))
        loaded = true
    }

    /// The board's children: most votes first, then newest.
    public mutating func setBoard(_ children: [(key: String, value: Any?)]) {
        board = children.compactMap { child in
            guard let fields = child.value as? [String: Any] else { return nil }
            return Joke(id: child.key, value: fields.merging(["author": ""]) { mine, _ in mine })
        }.sorted { ($0.votes, $0.id) > ($1.votes, $1.id) }
    }

    public mutating func setVotes(_ ids: Set<String>) {
        myVotes = ids
    }

    /// A vote command finished (or failed): the joke can be voted on again.
    public mutating func voteSettled(_ jokeID: String) { pendingVotes.remove(jokeID) }

    public var selectedJoke: Joke? { jokes.indices.contains(selection) ? jokes[selection] : nil }

    /// A key; `handled` false for keys this screen does not use.
    public mutating func handle(_ key: Key, uid: String) -> (handled: Bool, command: Command?) {
        if var field = composer {
            switch key {
            case .escape:
                composer = nil
            case .enter:
                let text = field.text.trimmingCharacters(in: .whitespacesAndNewlines)
                composer = nil
                return text.isEmpty ? (true, nil) : (true, .post(text: text))
            default:
                field.handle(key)
                composer = field
            }
            return (true, nil)
        }
        switch key {
        case .up, .character("k"): selection = max(0, selection - 1)
        case .down, .character("j"): selection = min(max(0, jokes.count - 1), selection + 1)
        case .home: selection = 0
        case .end: selection = max(0, jokes.count - 1)
        case .character("n"): composer = TextField(limit: 1000)
        case .character("t"): showingBoard.toggle()
        case .character("v"):
            guard let joke = selectedJoke, !pendingVotes.contains(joke.id) else { return (true, nil) }
            pendingVotes.insert(joke.id)
            return (true, .vote(jokeID: joke.id, up: !myVotes.contains(joke.id)))
        case .character("d"):
            guard let joke = selectedJoke, joke.author == uid else { return (true, nil) }
            return (true, .delete(jokeID: joke.id))
        default: return (false, nil)
        }
        return (true, nil)
    }

    public func render(width: Int, height: Int, uid: String) -> (lines: [Line], cursor: (row: Int, column: Int)?) {
        if showingBoard && composer == nil { return (renderBoard(width: width, height: height), nil) }
        var lines: [Line] = [Line("Jokes, newest first (\(jokes.count))", .bold), .blank]
        let composerRows = composer == nil ? 1 : 3
        let listHeight = max(1, height - lines.count - composerRows)
        if !loaded {
            lines.append(Line("Loading…", .dim))
        } else if jokes.isEmpty {
            lines.append(Line("No jokes yet: press n to post the first one.", .dim))
        }
        // Keep the selection in view.
        let first = max(0, min(selection - listHeight / 2, jokes.count - listHeight))
        for (index, joke) in jokes.enumerated().dropFirst(first).prefix(listHeight) {
            let voted = myVotes.contains(joke.id)
            let marker = index == selection ? "›" : " "
            let by = joke.author == uid ? "you" : (joke.authorName ?? String(joke.author.prefix(6)))
            let votes = Span(String(format: "%@ ▲%3d ", voted ? "★" : " ", joke.votes), voted ? .good : .plain)
            let text = String(joke.text.replacingOccurrences(of: "\n", with: " ").prefix(max(10, width - 30)))
            var line = Line([Span(marker + " ", .accent), votes, Span(text, index == selection ? .bold : .plain), Span("  — \(by)", .dim)])
            if index == selection { line.spans[0].style = .accent }
            lines.append(line)
        }
        while lines.count < height - composerRows { lines.append(.blank) }
        var cursor: (row: Int, column: Int)?
        if let composer {
            lines.append(Line("New joke (Enter posts, Esc cancels):", .bold))
            let shown = String(composer.text.suffix(max(1, width - 3)))
            lines.append(Line("> " + shown))
            cursor = (lines.count - 1, 2 + min(composer.cursor, shown.count))
            lines.append(.blank)
        } else {
            lines.append(Line("↑↓ select   n new joke   v vote / unvote   d delete yours   t top 10   ? keys", .dim))
        }
        return (lines, cursor)
    }

    private func renderBoard(width: Int, height: Int) -> [Line] {
        var lines: [Line] = [Line("Top 10 by votes", .bold), .blank]
        if board.isEmpty { lines.append(Line("No votes yet. (The seed functions keep this board: make functions.)", .dim)) }
        for (rank, joke) in board.prefix(10).enumerated() {
            let text = String(joke.text.replacingOccurrences(of: "\n", with: " ").prefix(max(10, width - 30)))
            lines.append(Line([Span(String(format: "%2d. ▲%3d ", rank + 1, joke.votes), .accent), Span(text), Span(joke.authorName.map { "  — \($0)" } ?? "", .dim)]))
        }
        while lines.count < height - 1 { lines.append(.blank) }
        lines.append(Line("t back to the feed   ? keys", .dim))
        return lines
    }
}
