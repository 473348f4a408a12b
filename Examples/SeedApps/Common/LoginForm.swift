import Foundation
public import SeedTerminal

/// What the login screen submits.
public struct LoginRequest: Equatable, Sendable {
    public enum Mode: Equatable, Sendable { case signIn, signUp }
    public var mode: Mode
    /// The email address; for apps with usernames, a username is accepted when signing in.
    public var identifier: String
    public var password: String
    /// Asked when signing up in apps with usernames.
    public var username: String?
}

/// The login screen's state: sign in or create an account, a field per line, one focused, and a
/// message from the last attempt. Pure: the app's shell performs what it submits.
public struct LoginForm: Equatable, Sendable {
    public private(set) var mode = LoginRequest.Mode.signIn
    public private(set) var focus = 0
    public var message: String?
    public var isBusy = false
    public let asksUsername: Bool
    private var identifier = TextField(limit: 200)
    private var password = TextField(secure: true, limit: 200)
    private var username = TextField(limit: 40)

    public enum Action: Equatable, Sendable { case none, submit(LoginRequest), quit }

    public init(asksUsername: Bool = false) { self.asksUsername = asksUsername }

    /// The fields shown in the current mode, in order.
    private var fieldCount: Int { mode == .signUp && asksUsername ? 3 : 2 }

    public mutating func handle(_ key: Key) -> Action {
        if key == .ctrl("c") || key == .escape { return .quit }
        guard !isBusy else { return .none }
        switch key {
        case .tab, .down: focus = (focus + 1) % fieldCount
        case .backTab, .up: focus = (focus + fieldCount - 1) % fieldCount
        case .ctrl("t"):
            mode = mode == .signIn ? .signUp : .signIn
            focus = 0
            message = nil
        case .enter:
            if focus < fieldCount - 1 {
                focus += 1
                return .none
            }
            return submit()
        default:
            withField(focus) { _ = $0.handle(key) }
        }
        return .none
    }

    private mutating func submit() -> Action {
        let identifier = identifier.text.trimmingCharacters(in: .whitespaces)
        if identifier.isEmpty {
            message = asksUsername && mode == .signIn ? "Enter your email or username." : "Enter your email address."
            focus = 0
            return .none
        }
        if password.text.isEmpty {
            message = "Enter your password."
            focus = 1
            return .none
        }
        var request = LoginRequest(mode: mode, identifier: identifier, password: password.text)
        if mode == .signUp && asksUsername {
            let name = username.text.trimmingCharacters(in: .whitespaces).lowercased()
            guard Self.isValidUsername(name) else {
                message = "Choose a username of 3–20 letters, digits or '_'."
                focus = 2
                return .none
            }
            request.username = name
        }
        isBusy = true
        message = mode == .signIn ? "Signing in…" : "Creating your account…"
        return .submit(request)
    }

    public static func isValidUsername(_ name: String) -> Bool {
        (3...20).contains(name.count) && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }

    /// The attempt failed: the message says why, and the form is usable again.
    public mutating func failed(_ message: String) {
        isBusy = false
        self.message = message
        password.clear()
        focus = 1
    }

    private mutating func withField(_ index: Int, _ change: (inout TextField) -> Void) {
        switch index {
        case 0: change(&identifier)
        case 1: change(&password)
        default: change(&username)
        }
    }

    private func field(_ index: Int) -> (label: String, field: TextField) {
        switch index {
        case 0: (asksUsername && mode == .signIn ? "Email or username" : "Email", identifier)
        case 1: ("Password", password)
        default: ("Username", username)
        }
    }

    /// The form's rows, from `top`, and where the cursor is.
    public func render(title: String, width: Int) -> (lines: [Line], cursor: (row: Int, column: Int)?) {
        var lines: [Line] = [
            Line(title, .accent),
            .blank,
            Line(mode == .signIn ? "Sign in" : "Create an account", .bold),
            .blank,
        ]
        var cursor: (Int, Int)?
        let labelWidth = 19
        for index in 0..<fieldCount {
            let (label, field) = field(index)
            let focused = index == focus
            let padded = label.padding(toLength: labelWidth - 2, withPad: " ", startingAt: 0)
            let shown = String(field.shown.suffix(max(1, width - labelWidth - 2)))
            lines.append(Line([Span(focused ? "> " : "  ", .accent), Span(padded, focused ? .bold : .plain), Span(shown, .plain)]))
            if focused && !isBusy { cursor = (lines.count - 1, labelWidth + min(field.cursor, shown.count)) }
        }
        lines.append(.blank)
        if let message { lines.append(Line(message, isBusy ? .warning : .error)) } else { lines.append(.blank) }
        lines.append(.blank)
        lines.append(Line("Enter: next field / submit   Tab: switch field   Ctrl-T: "
            + (mode == .signIn ? "create an account instead" : "sign in instead") + "   Esc: quit", .dim))
        return (lines, cursor)
    }
}
