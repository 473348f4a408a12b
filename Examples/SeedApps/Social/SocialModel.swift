import Foundation
public import SeedTerminal

/// A user's public profile (`users/<uid>`).
public struct Profile: Equatable, Sendable {
    public var uid: String
    public var username: String
    public var displayName: String?
    public var followers: Int

    public init?(uid: String, value: Any?) {
        guard let fields = value as? [String: Any], let username = fields["username"] as? String else { return nil }
        self.uid = uid
        self.username = username
        displayName = fields["displayName"] as? String
        followers = (fields["followers"] as? NSNumber)?.intValue ?? 0
    }

    public init(uid: String, username: String, displayName: String? = nil, followers: Int = 0) {
        (self.uid, self.username, self.displayName, self.followers) = (uid, username, displayName, followers)
    }
}

/// The social app's state (tutorial 002): everyone's profile with its follower count, whom the user
/// follows, who follows the user, and the selection. Keys become follow and unfollow commands.
public struct SocialModel: Equatable, Sendable {
    public private(set) var people: [Profile] = []
    public private(set) var following: Set<String> = []
    public private(set) var followers: [String] = []
    public private(set) var pending: Set<String> = []
    public private(set) var selection = 0
    public var loaded = false
    /// The user has no profile here: the account was made in another app (they share accounts and
    /// the signed-in session), so there is no username yet to show or to be followed by.
    public var needsProfile = false
    /// The username being typed for that profile, and why the last one was refused.
    public private(set) var usernameField: TextField?
    public private(set) var usernameProblem: String?

    public enum Command: Equatable, Sendable { case follow(uid: String), unfollow(uid: String), claim(username: String) }

    public init() {}

    /// Everyone but the user, by username.
    public mutating func setPeople(_ children: [(key: String, value: Any?)], except uid: String) {
        let selected = people.indices.contains(selection) ? people[selection].uid : nil
        people = children.compactMap { Profile(uid: $0.key, value: $0.value) }.filter { $0.uid != uid }.sorted { $0.username < $1.username }
        if let selected, let index = people.firstIndex(where: { $0.uid == selected }) { selection = index }
        selection = min(selection, max(0, people.count - 1))
        loaded = true
    }

    public mutating func setFollowing(_ uids: Set<String>) { following = uids }
    public mutating func setFollowers(_ uids: [String]) { followers = uids.sorted() }
    public mutating func settled(_ uid: String) { pending.remove(uid) }

    public func name(of uid: String) -> String {
        people.first { $0.uid == uid }.map { "@" + $0.username } ?? String(uid.prefix(8))
    }

    public mutating func handle(_ key: Key) -> (handled: Bool, command: Command?) {
        if var field = usernameField {
            switch key {
            case .escape:
                usernameField = nil
                usernameProblem = nil
            case .enter:
                let name = field.text.trimmingCharacters(in: .whitespaces).lowercased()
                guard LoginForm.isValidUsername(name) else {
                    usernameProblem = "Choose a username of 3–20 letters, digits or '_'."
                    return (true, nil)
                }
                usernameField = nil
                usernameProblem = nil
                return (true, .claim(username: name))
            default:
                field.handle(key)
                usernameField = field
            }
            return (true, nil)
        }
        switch key {
        case .character("u") where needsProfile: usernameField = TextField(limit: 20)
        case .up, .character("k"): selection = max(0, selection - 1)
        case .down, .character("j"): selection = min(max(0, people.count - 1), selection + 1)
        case .character("f"):
            guard people.indices.contains(selection) else { return (true, nil) }
            let uid = people[selection].uid
            guard !pending.contains(uid) else { return (true, nil) }
            pending.insert(uid)
            return (true, following.contains(uid) ? .unfollow(uid: uid) : .follow(uid: uid))
        default: return (false, nil)
        }
        return (true, nil)
    }

    public func render(width: Int, height: Int, me: Profile?) -> (lines: [Line], cursor: (row: Int, column: Int)?) {
        var lines: [Line] = []
        if let me {
            lines.append(Line([Span("You: @\(me.username)", .bold), Span("   \(me.followers) follower\(me.followers == 1 ? "" : "s")")]))
        } else if needsProfile {
            lines.append(Line("No profile here yet (the account was made in another app): press u to choose a username.", .accent))
        } else {
            lines.append(Line("Your profile is loading…", .dim))
        }
        let names = followers.map { name(of: $0) }
        lines.append(Line([Span("Following you: ", .bold), Span(names.isEmpty ? "nobody yet" : names.joined(separator: ", "), names.isEmpty ? .dim : .plain)]))
        lines.append(.blank)
        lines.append(Line("People (\(people.count))", .bold))
        if !loaded { lines.append(Line("Loading…", .dim)) } else if people.isEmpty { lines.append(Line("Nobody else has signed up yet.", .dim)) }
        let footerRows = usernameField == nil ? 1 : 3
        let listHeight = max(1, height - lines.count - footerRows)
        let first = max(0, min(selection - listHeight / 2, people.count - listHeight))
        for (index, person) in people.enumerated().dropFirst(first).prefix(listHeight) {
            let selected = index == selection
            let follows = following.contains(person.uid)
            lines.append(Line([
                Span(selected ? "› " : "  ", .accent),
                Span(("@" + person.username).padding(toLength: 22, withPad: " ", startingAt: 0), selected ? .bold : .plain),
                Span(String(format: "%5d follower%@", person.followers, person.followers == 1 ? " " : "s"), .plain),
                Span(follows ? "   ✓ following" : "", .good),
                Span(pending.contains(person.uid) ? "   …" : "", .dim),
            ]))
        }
        while lines.count < height - footerRows { lines.append(.blank) }
        guard let field = usernameField else {
            lines.append(Line(needsProfile ? "↑↓ select   u choose a username   ? keys" : "↑↓ select   f follow / unfollow   ? keys", .dim))
            return (lines, nil)
        }
        lines.append(Line(usernameProblem ?? "Your username (Enter claims it, Esc cancels):", usernameProblem == nil ? .bold : .error))
        lines.append(Line("> @" + field.text))
        lines.append(.blank)
        return (lines, (lines.count - 2, 3 + field.cursor))
    }
}
