public import Foundation
public import SeedTerminal

/// A message on the board (`messages/<push id>`).
public struct Message: Equatable, Sendable {
    public var id: String
    public var text: String
    public var author: String
    public var authorName: String?
    /// Milliseconds since 1970 (the server's time; estimated locally until the server has it).
    public var sentAt: Double

    public init?(id: String, value: Any?) {
        guard let fields = value as? [String: Any], let text = fields["text"] as? String, let author = fields["author"] as? String else {
            return nil
        }
        self.init(id: id, text: text, author: author, authorName: fields["authorName"] as? String,
                  sentAt: (fields["sentAt"] as? NSNumber)?.doubleValue ?? 0)
    }

    public init(id: String, text: String, author: String, authorName: String? = nil, sentAt: Double) {
        (self.id, self.text, self.author, self.authorName, self.sentAt) = (id, text, author, authorName, sentAt)
    }
}

/// A post of the user's own (`posts/<uid>/<push id>`).
public struct Post: Equatable, Sendable {
    public var id: String
    public var title: String
    public var body: String
    public var createdAt: Double

    public init?(id: String, value: Any?) {
        guard let fields = value as? [String: Any], let title = fields["title"] as? String, let body = fields["body"] as? String else {
            return nil
        }
        self.init(id: id, title: title, body: body, createdAt: (fields["createdAt"] as? NSNumber)?.doubleValue ?? 0)
    }

    public init(id: String, title: String, body: String, createdAt: Double) {
        (self.id, self.title, self.body, self.createdAt) = (id, title, body, createdAt)
    }
}

/// One of the five events a listener gets, as the board shows it.
public enum BoardEvent: Equatable, Sendable {
    case added(Message, after: String?)
    case changed(Message)
    case removed(id: String)
    case moved(id: String, after: String?)
}

/// The board app's state (tutorials 003 and 004): the message board in time order kept from child
/// events (added, changed, removed, moved) with a log of them, the user's own posts, whether the
/// address is verified, and the editor. Keys become commands; the shell performs them.
public struct BoardModel: Equatable, Sendable {
    public enum Tab: Equatable, Sendable { case board, posts }
    public private(set) var tab = Tab.board
    public private(set) var messages: [Message] = []
    public private(set) var events: [String] = []
    public private(set) var posts: [Post] = []
    public var isVerified = false
    public private(set) var selection = 0
    public private(set) var editor: Editor?

    public struct Editor: Equatable, Sendable {
        public enum Kind: Equatable, Sendable { case newMessage, editMessage(String), newPost, editPost(String) }
        public var kind: Kind
        public var title = TextField(limit: 200)
        public var body = TextField(limit: 1000)
        public var focus = 0
        var hasTitle: Bool {
            switch kind {
            case .newPost, .editPost: true
            default: false
            }
        }
    }

    public enum Command: Equatable, Sendable {
        case sendMessage(text: String)
        case editMessage(id: String, text: String)
        case deleteMessage(id: String)
        case createPost(title: String, body: String)
        case editPost(id: String, title: String, body: String)
        case deletePost(id: String)
        case sendVerification
        case checkVerification
    }

    public static let eventLogLength = 6

    public init() {}

    // MARK: Data

    /// A listener event on the time-ordered board: the list changes as the event says, and the event is logged.
    public mutating func apply(_ event: BoardEvent) {
        let selected = messages.indices.contains(selection) ? messages[selection].id : nil
        switch event {
        case .added(let message, let after):
            messages.removeAll { $0.id == message.id }
            messages.insert(message, at: position(after: after))
            log("childAdded   \(message.id)  \"\(message.text)\"")
        case .changed(let message):
            if let index = messages.firstIndex(where: { $0.id == message.id }) { messages[index] = message }
            log("childChanged \(message.id)  \"\(message.text)\"")
        case .removed(let id):
            messages.removeAll { $0.id == id }
            log("childRemoved \(id)")
        case .moved(let id, let after):
            if let index = messages.firstIndex(where: { $0.id == id }) {
                let message = messages.remove(at: index)
                messages.insert(message, at: position(after: after))
            }
            log("childMoved   \(id)" + (after.map { " after \($0)" } ?? " to the top"))
        }
        if tab == .board, let selected, let index = messages.firstIndex(where: { $0.id == selected }) { selection = index }
        clampSelection()
    }

    private func position(after key: String?) -> Int {
        guard let key else { return 0 }
        return (messages.firstIndex { $0.id == key }).map { $0 + 1 } ?? messages.count
    }

    private mutating func log(_ line: String) {
        events.append(line)
        if events.count > Self.eventLogLength { events.removeFirst(events.count - Self.eventLogLength) }
    }

    /// The user's posts, newest first.
    public mutating func setPosts(_ children: [(key: String, value: Any?)]) {
        posts = children.compactMap { Post(id: $0.key, value: $0.value) }.sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
        clampSelection()
    }

    private var rowCount: Int { tab == .board ? messages.count : posts.count }

    private mutating func clampSelection() { selection = min(selection, max(0, rowCount - 1)) }

    // MARK: Keys

    public mutating func handle(_ key: Key, uid: String) -> (handled: Bool, command: Command?) {
        if editor != nil { return (true, edit(key)) }
        switch key {
        case .tab, .backTab:
            tab = tab == .board ? .posts : .board
            selection = 0
        case .up, .character("k"): selection = max(0, selection - 1)
        case .down, .character("j"): selection = min(max(0, rowCount - 1), selection + 1)
        case .character("n"):
            if tab == .posts && !isVerified { return (true, nil) }
            editor = Editor(kind: tab == .board ? .newMessage : .newPost)
        case .character("e"):
            if tab == .board, messages.indices.contains(selection), messages[selection].author == uid {
                let message = messages[selection]
                editor = Editor(kind: .editMessage(message.id), body: TextField(message.text, limit: 1000))
            } else if tab == .posts, isVerified, posts.indices.contains(selection) {
                let post = posts[selection]
                editor = Editor(kind: .editPost(post.id), title: TextField(post.title, limit: 200), body: TextField(post.body, limit: 1000))
            }
        case .character("d"):
            if tab == .board, messages.indices.contains(selection), messages[selection].author == uid {
                return (true, .deleteMessage(id: messages[selection].id))
            }
            if tab == .posts, isVerified, posts.indices.contains(selection) { return (true, .deletePost(id: posts[selection].id)) }
        case .character("s") where tab == .posts && !isVerified: return (true, .sendVerification)
        case .character("r") where tab == .posts && !isVerified: return (true, .checkVerification)
        default: return (false, nil)
        }
        return (true, nil)
    }

    private mutating func edit(_ key: Key) -> Command? {
        guard var editor else { return nil }
        switch key {
        case .escape:
            self.editor = nil
            return nil
        case .tab, .backTab:
            if editor.hasTitle { editor.focus = 1 - editor.focus }
        case .enter:
            if editor.hasTitle && editor.focus == 0 {
                editor.focus = 1
                break
            }
            let title = editor.title.text.trimmingCharacters(in: .whitespaces)
            let body = editor.body.text.trimmingCharacters(in: .whitespaces)
            guard !body.isEmpty, !editor.hasTitle || !title.isEmpty else { break }
            self.editor = nil
            switch editor.kind {
            case .newMessage: return .sendMessage(text: body)
            case .editMessage(let id): return .editMessage(id: id, text: body)
            case .newPost: return .createPost(title: title, body: body)
            case .editPost(let id): return .editPost(id: id, title: title, body: body)
            }
        default:
            if editor.hasTitle && editor.focus == 0 { editor.title.handle(key) } else { editor.body.handle(key) }
        }
        self.editor = editor
        return nil
    }

    // MARK: Drawing

    public func render(width: Int, height: Int, uid: String, now: Date = .now) -> (lines: [Line], cursor: (row: Int, column: Int)?) {
        var lines: [Line] = [Line([
            Span(" Board ", tab == .board ? .reverse : .dim), Span("  "), Span(" My posts ", tab == .posts ? .reverse : .dim),
            Span("   (Tab switches)", .dim),
        ]), .blank]
        let editorRows = editor == nil ? 1 : (editor!.hasTitle ? 4 : 3)
        let logRows = tab == .board ? Self.eventLogLength + 2 : 0
        let listHeight = max(1, height - lines.count - editorRows - logRows)
        var rows: [Line] = []
        switch tab {
        case .board:
            if messages.isEmpty { rows.append(Line("No messages yet: press n to write one.", .dim)) }
            for (index, message) in messages.enumerated() {
                let who = message.author == uid ? "you" : (message.authorName ?? String(message.author.prefix(6)))
                rows.append(Line([
                    Span(index == selection ? "› " : "  ", .accent), Span(Self.time(message.sentAt) + " ", .dim),
                    Span(who + ": ", .bold), Span(message.text.replacingOccurrences(of: "\n", with: " ")),
                ]))
            }
        case .posts:
            if !isVerified {
                rows += [
                    Line("Posting needs a verified email address.", .warning),
                    Line("s: send the verification link (it is in the server's outbox, or your mail)"),
                    Line("r: I opened the link, check again"),
                ]
            } else if posts.isEmpty {
                rows.append(Line("No posts yet: press n to write one.", .dim))
            }
            for (index, post) in posts.enumerated() {
                rows.append(Line([
                    Span(index == selection ? "› " : "  ", .accent), Span(Self.time(post.createdAt) + " ", .dim), Span(post.title, .bold),
                    Span(" — " + post.body.replacingOccurrences(of: "\n", with: " ")),
                ]))
            }
        }
        let first = max(0, min(selection - listHeight / 2, rows.count - listHeight))
        lines += rows.dropFirst(first).prefix(listHeight)
        while lines.count < height - editorRows - logRows { lines.append(.blank) }
        if tab == .board {
            lines.append(Line("Events, as they happen:", .bold))
            lines += events.map { Line("  " + $0, .dim) }
            while lines.count < height - editorRows { lines.append(.blank) }
        }
        var cursor: (row: Int, column: Int)?
        if let editor {
            let heading = switch editor.kind {
            case .newMessage: "New message"
            case .editMessage: "Edit message"
            case .newPost: "New post"
            case .editPost: "Edit post"
            }
            lines.append(Line(heading + " (Enter saves, Esc cancels" + (editor.hasTitle ? ", Tab switches field)" : ")"), .bold))
            if editor.hasTitle {
                lines.append(Line("Title: " + editor.title.text))
                if editor.focus == 0 { cursor = (lines.count - 1, 7 + editor.title.cursor) }
            }
            lines.append(Line((editor.hasTitle ? "Body:  " : "> ") + editor.body.text))
            if !editor.hasTitle || editor.focus == 1 { cursor = (lines.count - 1, (editor.hasTitle ? 7 : 2) + editor.body.cursor) }
            lines.append(.blank)
        } else {
            lines.append(Line("↑↓ select   n new   e edit yours   d delete yours   Tab board/posts   ? keys", .dim))
        }
        return (lines, cursor)
    }

    /// `HH:mm` of a time in milliseconds (local time).
    static func time(_ milliseconds: Double) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm"
        return formatter.string(from: Date(timeIntervalSince1970: milliseconds / 1000))
    }
}
