import Foundation
public import HearthClient
public import SeedTerminal

/// One seed app's own part: what it shows and does once a user is signed in. The shell around it
/// (``SeedShell``) does the rest: connecting, the rules, the login screen, the header and status line.
/// Every method runs on the shell's queue, as do the database's callbacks.
public protocol SeedContent: AnyObject {
    var name: String { get }
    /// A line per key, for `?` and `--help`.
    var keyHelp: [String] { get }
    /// Whether accounts have usernames (asked on sign-up, accepted on sign-in).
    var asksUsername: Bool { get }
    /// Whether the database keeps a disk cache (set before the first use).
    var usesPersistence: Bool { get }
    /// The user signed in: start listening.
    func attach(user: User, database: Database, shell: SeedShell)
    /// The user signed out: stop listening and forget their data.
    func detach()
    func render(width: Int, height: Int) -> (lines: [Line], cursor: (row: Int, column: Int)?)
    /// A key; false when the content does not use it (the shell's keys then apply).
    func handle(_ key: Key) -> Bool
    /// The email address to sign in with for what was typed (a username, in apps that have them).
    func email(forLogin identifier: String, database: Database) async throws -> String
    /// A new account was made: finish it (a profile, a username); throwing undoes the account.
    func didCreateAccount(_ request: LoginRequest, user: User, database: Database) async throws
}

extension SeedContent {
    public var asksUsername: Bool { false }
    public var usesPersistence: Bool { false }
    public func email(forLogin identifier: String, database: Database) async throws -> String { identifier }
    public func didCreateAccount(_ request: LoginRequest, user: User, database: Database) async throws {}
}

/// An error the app explains to its user in words.
public struct AppMessage: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// What a user reads when something fails: Firebase's errors in plain words, with what to do next.
public enum ErrorText {
    public static func describe(_ error: any Error, serverURL: String) -> String {
        if let message = error as? AppMessage { return message.description }
        let error = error as NSError
        if error.domain == AuthErrors.domain, let code = AuthErrorCode(rawValue: error.code) {
            switch code {
            case .invalidCredential, .wrongPassword, .userNotFound: return "Wrong email, username or password."
            case .emailAlreadyInUse: return "That email already has an account: sign in instead (Ctrl-T)."
            case .weakPassword: return "Choose a password of at least 6 characters."
            case .invalidEmail, .missingEmail: return "That is not a valid email address."
            case .networkError: return "Cannot reach the server at \(serverURL): is it running ('make run')?"
            case .tooManyRequests: return "Too many attempts: wait a minute, then try again."
            case .userDisabled: return "This account has been disabled."
            case .requiresRecentLogin: return "Sign in again, then retry."
            default: return error.localizedDescription
            }
        }
        if error.domain == "com.firebase", error.code == 1 {
            return "Not allowed (the rules refused it): \(error.localizedDescription)"
        }
        return error.localizedDescription
    }
}
