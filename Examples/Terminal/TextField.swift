/// A one-line text input: its text, the cursor, and the edits keys make. Secure fields show dots.
public struct TextField: Equatable, Sendable {
    public var text: String { String(characters) }
    public private(set) var cursor = 0
    public var isSecure: Bool
    public var limit: Int
    private var characters: [Character] = []

    public init(_ text: String = "", secure: Bool = false, limit: Int = 1000) {
        isSecure = secure
        self.limit = limit
        characters = Array(text.prefix(limit))
        cursor = characters.count
    }

    /// Applies an editing key; false for keys a text field does not use (Enter, Tab, arrows up and down).
    @discardableResult
    public mutating func handle(_ key: Key) -> Bool {
        switch key {
        case .character(let character):
            guard characters.count < limit else { return true }
            characters.insert(character, at: cursor)
            cursor += 1
        case .backspace:
            guard cursor > 0 else { return true }
            characters.remove(at: cursor - 1)
            cursor -= 1
        case .delete:
            if cursor < characters.count { characters.remove(at: cursor) }
        case .left: cursor = max(0, cursor - 1)
        case .right: cursor = min(characters.count, cursor + 1)
        case .home, .ctrl("a"): cursor = 0
        case .end, .ctrl("e"): cursor = characters.count
        case .ctrl("u"):
            characters.removeFirst(cursor)
            cursor = 0
        case .ctrl("k"): characters.removeLast(characters.count - cursor)
        default: return false
        }
        return true
    }

    public mutating func clear() { self = TextField(secure: isSecure, limit: limit) }

    /// What the field shows: the text, or a dot per character when secure.
    public var shown: String { isSecure ? String(repeating: "•", count: characters.count) : text }
}
