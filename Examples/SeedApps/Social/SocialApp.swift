import Foundation
public import HearthClient
public import SeedTerminal

/// The social app on the database: profiles at `users/<uid>` {username, displayName, followers},
/// `usernames/<name>: uid` and `emails/<uid>` for logging in by username, `followers/<uid>/<follower>`
/// and `following/<uid>/<followed>` written together in one update; follower counts are kept by the seed
/// functions (Examples/SeedFunctions, `make functions`), not by clients.
public final class SocialApp: SeedContent, @unchecked Sendable {  // confined to the shell's queue
    public let name = "social"
    public let asksUsername = true
    public let keyHelp = [
        "↑ ↓ j k   select a person", "f         follow or unfollow the selected person",
        "u         choose a username (an account made in another app has none here)",
    ]
    private var model = SocialModel()
    private var me: Profile?
    private var user: User?
    private weak var shell: SeedShell?
    private var handles: [(DatabaseQuery, DatabaseHandle)] = []

    public init() {}

    public func email(forLogin identifier: String, database: Database) async throws -> String {
        if identifier.contains("@") { return identifier }
        let name = identifier.lowercased()
        guard LoginForm.isValidUsername(name) else { throw AppMessage("'\(identifier)' is neither an email address nor a username.") }
        let uid = try await database.reference(withPath: "usernames/\(name)").getData().value as? String
        guard let uid else { throw AppMessage("Nobody is called @\(name): check the spelling, or create an account (Ctrl-T).") }
        guard let email = try await database.reference(withPath: "emails/\(uid)").getData().value as? String else {
            throw AppMessage("@\(name) has no email address on record: sign in with the address instead.")
        }
        return email
    }

    /// Claims the username (refused when taken: the rules allow creating it only), then writes the
    /// address and the profile.
    public func didCreateAccount(_ request: LoginRequest, user: User, database: Database) async throws {
        guard let username = request.username else { return }
        do {
            try await database.reference(withPath: "usernames/\(username)").setValue(user.uid)
        } catch {
            throw AppMessage("The username @\(username) is taken: choose another.")
        }
        try await database.reference().updateChildValues(Self.profile(username: username, email: request.identifier, uid: user.uid))
    }

    /// The address (for logging in by username) and the profile, written together once the username is
    /// claimed.
    static func profile(username: String, email: String, uid: String) -> [String: Any] {
        ["emails/\(uid)": email, "users/\(uid)": ["username": username, "displayName": username]]
    }

    /// Gives an account made in another app its profile here: the same claim as at sign-up.
    private func claim(_ username: String, user: User, database: Database, shell: SeedShell) {
        shell.status("Claiming @\(username)…")
        let url = shell.options.databaseURL
        database.reference(withPath: "usernames/\(username)").setValue(user.uid) { error, _ in
            guard error == nil else {
                shell.status("The username @\(username) is taken: press u to choose another.", isError: true)
                return
            }
            database.reference().updateChildValues(Self.profile(username: username, email: user.email ?? "", uid: user.uid)) { error, _ in
                shell.status(error.map { ErrorText.describe($0, serverURL: url) } ?? "You are @\(username) now.", isError: error != nil)
            }
        }
    }

    public func attach(user: User, database: Database, shell: SeedShell) {
        self.user = user
        self.shell = shell
        model = SocialModel()
        let uid = user.uid
        observe(database.reference(withPath: "users"), shell) { [weak self] snapshot in
            let children = snapshot.children.compactMap { $0 as? DataSnapshot }.map { (key: $0.key, value: $0.value) }
            let me = children.first { $0.key == uid }.flatMap { Profile(uid: uid, value: $0.value) }
            self?.me = me
            self?.model.needsProfile = me == nil
            self?.model.setPeople(children, except: uid)
        }
        observe(database.reference(withPath: "following/\(uid)"), shell) { [weak self] snapshot in
            self?.model.setFollowing(Set((snapshot.value as? [String: Any])?.keys.map { $0 } ?? []))
        }
        observe(database.reference(withPath: "followers/\(uid)"), shell) { [weak self] snapshot in
            self?.model.setFollowers((snapshot.value as? [String: Any])?.keys.map { $0 } ?? [])
        }
    }

    private func observe(_ query: DatabaseQuery, _ shell: SeedShell, _ changed: @escaping (DataSnapshot) -> Void) {
        let handle = query.observe(.value, with: { [weak shell] snapshot in
            changed(snapshot)
            shell?.redraw()
        }, withCancel: { [weak shell] error in shell?.status("Not readable: \(error.localizedDescription)", isError: true) })
        handles.append((query, handle))
    }

    public func detach() {
        for (query, handle) in handles { query.removeObserver(withHandle: handle) }
        handles = []
        user = nil
        me = nil
        model = SocialModel()
    }

    public func render(width: Int, height: Int) -> (lines: [Line], cursor: (row: Int, column: Int)?) {
        model.render(width: width, height: height, me: me)
    }

    public func handle(_ key: Key) -> Bool {
        guard let user, let shell else { return false }
        let (handled, command) = model.handle(key)
        guard let command else { return handled }
        let me = user.uid
        let (target, follow): (String, Bool)
        switch command {
        case .follow(let uid): (target, follow) = (uid, true)
        case .unfollow(let uid): (target, follow) = (uid, false)
        case .claim(let username):
            claim(username, user: user, database: shell.database, shell: shell)
            return true
        }
        let root = shell.database.reference()
        let url = shell.options.databaseURL
        // Both sides in one atomic update; the seed functions count the followers.
        root.updateChildValues([
            "followers/\(target)/\(me)": follow ? true : NSNull(),
            "following/\(me)/\(target)": follow ? true : NSNull(),
        ]) { [weak self] error, _ in
            self?.model.settled(target)
            if let error { shell.status(ErrorText.describe(error, serverURL: url), isError: true) } else { shell.redraw() }
        }
        return true
    }
}
