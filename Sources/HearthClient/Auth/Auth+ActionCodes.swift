public import Foundation

/// What an emailed action code is for (``Auth/checkActionCode(_:)``), as FirebaseAuth's `ActionCodeInfo`.
open class ActionCodeInfo: NSObject, @unchecked Sendable {  // immutable
    public let operation: ActionCodeOperation
    /// The address the code was sent to (for a change of email, the new one).
    public let email: String
    /// For a change of email, the address before it.
    public let previousEmail: String?

    init(operation: ActionCodeOperation, email: String, previousEmail: String?) {
        self.operation = operation
        self.email = email
        self.previousEmail = previousEmail
    }
}

/// The kinds of emailed action, with FirebaseAuth's raw values.
public enum ActionCodeOperation: Int, Sendable {
    case unknown = 0
    case passwordReset = 1
    case verifyEmail = 2
    case recoverEmail = 3
    case emailLink = 4
    case verifyAndChangeEmail = 5
    case revertSecondFactorAddition = 6

    /// The operation of a server's `requestType`.
    init(requestType: String?) {
        switch requestType {
        case "PASSWORD_RESET": self = .passwordReset
        case "VERIFY_EMAIL": self = .verifyEmail
        case "RECOVER_EMAIL": self = .recoverEmail
        case "EMAIL_SIGNIN": self = .emailLink
        case "VERIFY_AND_CHANGE_EMAIL": self = .verifyAndChangeEmail
        case "REVERT_SECOND_FACTOR_ADDITION": self = .revertSecondFactorAddition
        default: self = .unknown
        }
    }
}

extension Auth {
    /// What `code` (from an emailed link's `oobCode`) is for and whom, without using it.
    public func checkActionCode(_ code: String) async throws -> ActionCodeInfo {
        let answer = try await backend.call("resetPassword", ["oobCode": code])
        let requestType = answer["requestType"] as? String
        let email = answer["email"] as? String ?? ""
        if requestType == "VERIFY_AND_CHANGE_EMAIL" || requestType == "RECOVER_EMAIL" {
            return ActionCodeInfo(
                operation: ActionCodeOperation(requestType: requestType), email: answer["newEmail"] as? String ?? email, previousEmail: email)
        }
        return ActionCodeInfo(operation: ActionCodeOperation(requestType: requestType), email: email, previousEmail: nil)
    }

    public func checkActionCode(_ code: String, completion: @escaping (ActionCodeInfo?, (any Error)?) -> Void) {
        complete(completion) { try await self.checkActionCode(code) }
    }

    /// Revokes the Sign in with Apple token behind an authorization code (Apple requires apps to offer
    /// account deletion): the server revokes it with Apple. Hearth's server answers
    /// `operationNotAllowed` until Sign in with Apple is configured on it (docs/auth.md).
    public func revokeToken(withAuthorizationCode authorizationCode: String) async throws {
        guard let user = currentUser else { throw AuthFailure.error(.nullUser) }
        _ = try await backend.call("revokeToken", [
            "providerId": "apple.com", "tokenType": "CODE", "token": authorizationCode, "idToken": try await user.getIDToken(),
        ])
    }

    public func revokeToken(withAuthorizationCode authorizationCode: String, completion: (((any Error)?) -> Void)? = nil) {
        complete(completion) { try await self.revokeToken(withAuthorizationCode: authorizationCode) }
    }

    /// Makes `user` (a user of another `Auth` of the same project, say one kept by the app) this auth's
    /// current user: its token is checked with the server first, so a user whose session ended is
    /// refused with `invalidUserToken` or `userTokenExpired` and nothing changes.
    public func updateCurrentUser(_ user: User) async throws {
        guard user.auth?.backend.endpoint.apiKey == backend.endpoint.apiKey else {
            throw AuthFailure.error(.invalidUserToken, detail: "The user belongs to another project (another API key).")
        }
        if currentUser === user { return }
        let token = try await user.getIDToken()
        _ = try await signedIn(TokenGrant(idToken: token, refreshToken: user.refreshToken ?? "", expiresAt: user.stored.expiresAt, uid: user.uid))
    }

    public func updateCurrentUser(_ user: User, completion: (((any Error)?) -> Void)? = nil) {
        let user = AuthCallbacks.Unchecked(user)
        complete(completion) { try await self.updateCurrentUser(user.value) }
    }

    /// Every ID token this auth's user gets (a sign-in, a refresh, a sign-out as nil), as an async
    /// sequence (Hearth's addition, like ``authStateChanges``): what `addIDTokenDidChangeListener`
    /// reports. Ending the loop removes the listener.
    public var idTokenChanges: AsyncStream<User?> {
        AsyncStream { continuation in
            let handle = AuthCallbacks.Unchecked(
                self.addIDTokenDidChangeListener { _, user in continuation.yield(AuthCallbacks.Unchecked(user).value) })
            continuation.onTermination = { [weak self] _ in self?.removeIDTokenDidChangeListener(handle.value) }
        }
    }
}
