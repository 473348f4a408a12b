import Foundation
public import HearthClient
public import SeedTerminal

/// The board app on the database: `messages/<push id>` {text, author, authorName, sentAt} listened to
/// in time order with every child event, and `posts/<uid>/<push id>` {title, body, createdAt} that only
/// a verified address may write. Both are kept synced with the disk cache on, so what is written while
/// the server is away shows at once and is sent when it is back.
public final class BoardApp: SeedContent, @unchecked Sendable {  // confined to the shell's queue
    public let name = "board"
    public let usesPersistence = true
    public let keyHelp = [
        "Tab       switch between the board and your posts", "↑ ↓ j k   select", "n         write a message or a post (Enter saves)",
        "e         edit the selected one (yours)", "d         delete the selected one (yours)",
        "s / r     (posts, unverified) send the verification link / check again",
    ]
    private var model = BoardModel()
    private var user: User?
    private weak var shell: SeedShell?
    private var handles: [(DatabaseQuery, DatabaseHandle)] = []
    private var synced: [DatabaseQuery] = []

    public init() {}

    public func attach(user: User, database: Database, shell: SeedShell) {
        self.user = user
        self.shell = shell
        model = BoardModel()
        model.isVerified = user.isEmailVerified
        let board = database.reference(withPath: "messages").queryOrdered(byChild: "sentAt")
        board.keepSynced(true)
        synced.append(board)
        let events: [(DataEventType, (DataSnapshot, String?) -> BoardEvent?)] = [
            (.childAdded, { snapshot, after in Message(id: snapshot.key, value: snapshot.value).map { .added($0, after: after) } }),
            (.childChanged, { snapshot, _ in Message(id: snapshot.key, value: snapshot.value).map { .changed($0) } }),
            (.childRemoved, { snapshot, _ in .removed(id: snapshot.key) }),
            (.childMoved, { snapshot, after in .moved(id: snapshot.key, after: after) }),
        ]
        for (type, event) in events {
            let handle = board.observe(type, andPreviousSiblingKeyWith: { [weak self] snapshot, after in
                guard let event = event(snapshot, after) else { return }
                self?.model.apply(event)
                self?.shell?.redraw()
            }, withCancel: { [weak shell] error in shell?.status("The board is not readable: \(error.localizedDescription)", isError: true) })
            handles.append((board, handle))
        }
        let posts = database.reference(withPath: "posts/\(user.uid)").queryOrdered(byChild: "createdAt")
        posts.keepSynced(true)
        synced.append(posts)
        handles.append((posts, posts.observe(.value) { [weak self] snapshot in
            self?.model.setPosts(snapshot.children.compactMap { $0 as? DataSnapshot }.map { (key: $0.key, value: $0.value) })
            self?.shell?.redraw()
        }))
    }

    public func detach() {
        for (query, handle) in handles { query.removeObserver(withHandle: handle) }
        for query in synced { query.keepSynced(false) }
        handles = []
        synced = []
        user = nil
        model = BoardModel()
    }

    public func render(width: Int, height: Int) -> (lines: [Line], cursor: (row: Int, column: Int)?) {
        model.render(width: width, height: height, uid: user?.uid ?? "")
    }

    public func handle(_ key: Key) -> Bool {
        guard let user, let shell else { return false }
        let (handled, command) = model.handle(key, uid: user.uid)
        if let command { perform(command, user: user, shell: shell) }
        return handled
    }

    private func perform(_ command: BoardModel.Command, user: User, shell: SeedShell) {
        let database = shell.database
        let url = shell.options.databaseURL
        let report: (String) -> (Error?, DatabaseReference) -> Void = { done in
            { error, _ in shell.status(error.map { ErrorText.describe($0, serverURL: url) } ?? done, isError: error != nil) }
        }
        switch command {
        case .sendMessage(let text):
            database.reference(withPath: "messages").childByAutoId().setValue(
                ["text": text, "author": user.uid, "authorName": JokesApp.displayName(user), "sentAt": ServerValue.timestamp()],
                withCompletionBlock: report("Sent."))
        case .editMessage(let id, let text):
            database.reference(withPath: "messages/\(id)").updateChildValues(["text": text], withCompletionBlock: report("Saved."))
        case .deleteMessage(let id):
            database.reference(withPath: "messages/\(id)").removeValue(completionBlock: report("Deleted."))
        case .createPost(let title, let body):
            database.reference(withPath: "posts/\(user.uid)").childByAutoId().setValue(
                ["title": title, "body": body, "createdAt": ServerValue.timestamp()], withCompletionBlock: report("Posted."))
            shell.status("Saved here; it is sent when the server is reachable.")
        case .editPost(let id, let title, let body):
            database.reference(withPath: "posts/\(user.uid)/\(id)").updateChildValues(["title": title, "body": body], withCompletionBlock: report("Saved."))
        case .deletePost(let id):
            database.reference(withPath: "posts/\(user.uid)/\(id)").removeValue(completionBlock: report("Deleted."))
        case .sendVerification:
            shell.perform {
                try await user.sendEmailVerification()
                shell.queue.async { shell.status("Sent: open the link in the email (or the server's outbox), then press r.") }
            }
        case .checkVerification:
            shell.perform { [self] in
                try await user.reload()
                // The database reads `email_verified` from the ID token: get one that says so.
                _ = try await user.getIDToken(forcingRefresh: true)
                let verified = user.isEmailVerified
                shell.queue.async {
                    self.model.isVerified = verified
                    shell.status(verified ? "Verified: you can post now." : "Not verified yet: open the link first.", isError: !verified)
                }
            }
        }
    }
}
