public import Foundation
import HearthSupport

/// What every account and provider profile has, as `UserInfo` in FirebaseAuth.
public protocol UserInfo: NSObjectProtocol {
    var providerID: String { get }
    var uid: String { get }
    var displayName: String? { get }
    var photoURL: URL? { get }
    var email: String? { get }
    var phoneNumber: String? { get }
}

/// When the account was made and last signed in to.
open class UserMetadata: NSObject, @unchecked Sendable {  // immutable
    public let lastSignInDate: Date?
    public let creationDate: Date?

    init(lastSignInDate: Date?, creationDate: Date?) {
        self.lastSignInDate = lastSignInDate
        self.creationDate = creationDate
    }
}

/// One sign-in method linked to an account (`password` for email and password).
final class ProviderUserInfo: NSObject, UserInfo, @unchecked Sendable {  // immutable
    let providerID: String
    let uid: String
    let displayName: String?
    let photoURL: URL?
    let email: String?
    let phoneNumber: String?

    init(providerID: String, uid: String, displayName: String?, photoURL: URL?, email: String?, phoneNumber: String?) {
        self.providerID = providerID
        self.uid = uid
        self.displayName = displayName
        self.photoURL = photoURL
        self.email = email
        self.phoneNumber = phoneNumber
    }
}

/// The signed-in account, as `User` in FirebaseAuth: its profile, its ID token (refreshed before it
/// expires), and the operations on the account. The same object stays current while the user is signed
/// in: `reload()` and the other calls update it in place.
open class User: NSObject, UserInfo, @unchecked Sendable {  // state behind a lock
    weak var auth: Auth?
    private let record: Locked<StoredUser>
    /// The refresh in flight, which concurrent callers share.
    private let refreshing = Locked<Task<TokenGrant, any Error>?>(nil)

    init(auth: Auth, record: StoredUser) {
        self.auth = auth
        self.record = Locked(record)
    }

    var stored: StoredUser { record.withLock { $0 } }

    // MARK: Profile

    public var uid: String { stored.uid }
    public var providerID: String { "Firebase" }
    public var email: String? { stored.email }
    public var displayName: String? { stored.displayName }
    public var photoURL: URL? { stored.photoURL.flatMap(URL.init(string:)) }
    public var phoneNumber: String? { nil }
    public var isAnonymous: Bool { stored.isAnonymous }
    public func anonymous() -> Bool { isAnonymous }
    public var isEmailVerified: Bool { stored.emailVerified }
    public func emailVerified() -> Bool { isEmailVerified }
    public var refreshToken: String? { stored.refreshToken }
    public var tenantID: String? { nil }
    public var metadata: UserMetadata { UserMetadata(lastSignInDate: stored.lastSignInAt, creationDate: stored.createdAt) }
    /// Each provider's own record of the user (its id there, and the name, photo and address it gave).
    public var providerData: [any UserInfo] {
        let user = stored
        if let infos = user.providerInfo {
            return infos.map {
                ProviderUserInfo(
                    providerID: $0.providerID, uid: $0.uid, displayName: $0.displayName, photoURL: $0.photoURL.flatMap(URL.init(string:)),
                    email: $0.email, phoneNumber: $0.phoneNumber)
            }
        }
        return user.providers.map {
            ProviderUserInfo(
                providerID: $0, uid: $0 == "password" ? (user.email ?? user.uid) : user.uid, displayName: user.displayName,
                photoURL: user.photoURL.flatMap(URL.init(string:)), email: user.email, phoneNumber: nil)
        }
    }

    // MARK: ID tokens

    /// The ID token, refreshed first when it expires within five minutes or `forceRefresh` asks.
    public func getIDToken(forcingRefresh forceRefresh: Bool = false) async throws -> String {
        let current = stored
        if !forceRefresh, current.expiresAt.timeIntervalSinceNow > AuthLimits.refreshMarginSeconds { return current.idToken }
        return try await refresh().idToken
    }

    public func idTokenForcingRefresh(_ forceRefresh: Bool) async throws -> String {
        try await getIDToken(forcingRefresh: forceRefresh)
    }

    public func getIDToken(completion: ((String?, (any Error)?) -> Void)?) {
        getIDTokenForcingRefresh(false, completion: completion)
    }

    public func getIDTokenForcingRefresh(_ forceRefresh: Bool, completion: ((String?, (any Error)?) -> Void)?) {
        complete(completion) { try await self.getIDToken(forcingRefresh: forceRefresh) }
    }

    public func getIDTokenResult(forcingRefresh forceRefresh: Bool = false) async throws -> AuthTokenResult {
        let token = try await getIDToken(forcingRefresh: forceRefresh)
        guard let result = AuthTokenResult(token: token) else {
            throw AuthFailure.error(.malformedJWT, detail: "The ID token could not be decoded.")
        }
        return result
    }

    public func getIDTokenResult(completion: ((AuthTokenResult?, (any Error)?) -> Void)?) {
        getIDTokenResult(forcingRefresh: false, completion: completion)
    }

    public func getIDTokenResult(forcingRefresh: Bool, completion: ((AuthTokenResult?, (any Error)?) -> Void)?) {
        complete(completion) { try await self.getIDTokenResult(forcingRefresh: forcingRefresh) }
    }

    /// New tokens from the refresh token; one request however many callers ask at once. An account the
    /// server no longer honours (deleted, disabled, tokens revoked) signs the app out.
    func refresh() async throws -> TokenGrant {
        let task = refreshing.withLock { running -> Task<TokenGrant, any Error> in
            if let running { return running }
            let refreshToken = stored.refreshToken
            let backend = auth?.backend
            let task = Task<TokenGrant, any Error> {
                guard let backend else { throw AuthFailure.error(.nullUser) }
                return try await backend.refresh(refreshToken)
            }
            running = task
            return task
        }
        defer { refreshing.withLock { if $0 == task { $0 = nil } } }
        do {
            let grant = try await task.value
            record.withLock { $0.take(grant) }
            auth?.tokensChanged(of: self)
            return grant
        } catch {
            auth?.failed(self, with: error)
            throw error
        }
    }

    // MARK: The account

    /// Reads the account again from the server (after its email was verified elsewhere, say).
    public func reload() async throws {
        try await lookUp()
    }

    public func reload(completion: (((any Error)?) -> Void)? = nil) {
        complete(completion) { try await self.reload() }
    }

    public func sendEmailVerification(with actionCodeSettings: ActionCodeSettings? = nil) async throws {
        var body: [String: Any] = ["requestType": "VERIFY_EMAIL", "idToken": try await getIDToken()]
        actionCodeSettings?.add(to: &body)
        _ = try await call("sendOobCode", body)
    }

    public func sendEmailVerification(with actionCodeSettings: ActionCodeSettings? = nil, completion: (((any Error)?) -> Void)? = nil) {
        complete(completion) { try await self.sendEmailVerification(with: actionCodeSettings) }
    }

    /// Sends a link to `newEmail`; the address changes when it is opened.
    public func sendEmailVerification(beforeUpdatingEmail newEmail: String, actionCodeSettings: ActionCodeSettings? = nil) async throws {
        var body: [String: Any] = ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": try await getIDToken(), "newEmail": newEmail]
        actionCodeSettings?.add(to: &body)
        _ = try await call("sendOobCode", body)
    }

    public func sendEmailVerification(
        beforeUpdatingEmail email: String, actionCodeSettings: ActionCodeSettings? = nil, completion: (((any Error)?) -> Void)? = nil
    ) {
        complete(completion) { try await self.sendEmailVerification(beforeUpdatingEmail: email, actionCodeSettings: actionCodeSettings) }
    }

    public func updatePassword(to password: String) async throws {
        try await update(["password": password])
    }

    public func updatePassword(to password: String, completion: (((any Error)?) -> Void)? = nil) {
        complete(completion) { try await self.updatePassword(to: password) }
    }

    /// Changes the address at once (Firebase has deprecated it for ``sendEmailVerification(beforeUpdatingEmail:actionCodeSettings:)``;
    /// a server protecting against email enumeration, Hearth's default, refuses it with `operationNotAllowed`).
    public func updateEmail(to email: String) async throws {
        try await update(["email": email])
    }

    public func updateEmail(to email: String, completion: (((any Error)?) -> Void)? = nil) {
        complete(completion) { try await self.updateEmail(to: email) }
    }

    /// Deletes the account and signs out.
    public func delete() async throws {
        _ = try await call("delete", ["idToken": try await getIDToken()])
        auth?.signedOut(self)
    }

    public func delete(completion: (((any Error)?) -> Void)? = nil) {
        complete(completion) { try await self.delete() }
    }

    public func createProfileChangeRequest() -> UserProfileChangeRequest { UserProfileChangeRequest(user: self) }

    /// Signs in again with `credential` (for operations that need a recent sign-in); it must be this user's.
    @discardableResult
    public func reauthenticate(with credential: AuthCredential) async throws -> AuthDataResult {
        guard let auth else { throw AuthFailure.error(.nullUser) }
        try Auth.checkInput(credential, creating: false)
        if let credential = credential as? OAuthCredential {
            // No account is made for a provider user this account does not have: FirebaseAuth says userMismatch.
            let answer: [String: Any]
            do {
                answer = try await auth.identityProviderAnswer(credential, autoCreate: false)
            } catch let error as NSError where error.code == AuthErrorCode.userNotFound.rawValue {
                throw AuthFailure.error(.userMismatch)
            }
            let grant = try AuthBackend.grant(from: answer)
            guard grant.uid == uid else { throw AuthFailure.error(.userMismatch) }
            try await take(grant)
            return AuthDataResult(user: self, identityProviderAnswer: answer)
        }
        let grant = try await auth.signInGrant(with: credential)
        guard grant.uid == uid else { throw AuthFailure.error(.userMismatch) }
        try await take(grant)
        return AuthDataResult(user: self, providerID: credential.provider, isNewUser: false)
    }

    /// New tokens for this user: kept, announced, and the profile read again.
    private func take(_ grant: TokenGrant) async throws {
        record.withLock { $0.take(grant) }
        auth?.tokensChanged(of: self)
        try await lookUp()
    }

    public func reauthenticate(with credential: AuthCredential, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
        complete(completion) { try await self.reauthenticate(with: credential) }
    }

    /// Adds a way to sign in to this account: an email and password, or an identity provider (an
    /// anonymous account becomes permanent, same uid).
    @discardableResult
    public func link(with credential: AuthCredential) async throws -> AuthDataResult {
        guard let auth else { throw AuthFailure.error(.nullUser) }
        try Auth.checkInput(credential, creating: false)
        if let credential = credential as? OAuthCredential {
            guard !stored.providers.contains(credential.provider) else { throw AuthFailure.error(.providerAlreadyLinked) }
            let answer = try await auth.identityProviderAnswer(credential, linkingTo: try await getIDToken())
            try await take(try AuthBackend.grant(from: answer))
            return AuthDataResult(user: self, identityProviderAnswer: answer)
        }
        guard case .password(let email, let password) = credential.kind else {
            throw AuthFailure.error(.noSuchProvider, detail: "Only email and password or identity-provider credentials can be linked here.")
        }
        let answer = try await call("signUp", ["idToken": try await getIDToken(), "email": email, "password": password, "returnSecureToken": true])
        try await take(grant(answer))
        return AuthDataResult(user: self, providerID: "password", isNewUser: false)
    }

    public func link(with credential: AuthCredential, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
        complete(completion) { try await self.link(with: credential) }
    }

    // MARK: Helpers

    /// `accounts:update` with the ID token; takes the new tokens (a password change revokes the old
    /// ones) and the profile it returns.
    func update(_ fields: [String: Any]) async throws {
        var body = fields
        body["idToken"] = try await getIDToken()
        body["returnSecureToken"] = true
        let answer = try await call("update", body)
        let tokensChanged = record.withLock { user in
            let before = user.idToken
            if answer["idToken"] != nil, let grant = try? AuthBackend.grant(from: answer) { user.take(grant) }
            user.update(from: answer)
            return user.idToken != before
        }
        if tokensChanged { auth?.tokensChanged(of: self) }
        try await lookUp()
    }

    private func lookUp() async throws {
        let answer = try await call("lookup", ["idToken": try await getIDToken()])
        guard let account = (answer["users"] as? [[String: Any]])?.first else {
            let error = AuthFailure.error(.userNotFound)
            auth?.failed(self, with: error)
            throw error
        }
        record.withLock { $0.update(from: account) }
        auth?.profileChanged(of: self)
    }

    private func grant(_ answer: [String: Any]) -> TokenGrant {
        (try? AuthBackend.grant(from: answer)) ?? TokenGrant(idToken: stored.idToken, refreshToken: stored.refreshToken, expiresAt: stored.expiresAt, uid: uid)
    }

    private func call(_ method: String, _ body: [String: Any]) async throws -> [String: Any] {
        guard let backend = auth?.backend else { throw AuthFailure.error(.nullUser) }
        do {
            return try await backend.call(method, body)
        } catch {
            auth?.failed(self, with: error)
            throw error
        }
    }

    func complete<Value>(_ completion: ((Value?, (any Error)?) -> Void)?, _ work: @escaping @Sendable () async throws -> Value) {
        AuthCallbacks.run(on: auth?.callbackQueue ?? .main, completion, work)
    }

    func complete(_ completion: (((any Error)?) -> Void)?, _ work: @escaping @Sendable () async throws -> Void) {
        AuthCallbacks.run(on: auth?.callbackQueue ?? .main, completion, work)
    }
}

/// Changes to the profile, sent together by ``commitChanges()``.
open class UserProfileChangeRequest: NSObject, @unchecked Sendable {  // used from one place at a time, as Firebase's
    private let user: User
    private var changes: [String: Any] = [:]
    private var deletions: [String] = []

    init(user: User) { self.user = user }

    public var displayName: String? {
        didSet { set("displayName", displayName, deleting: "DISPLAY_NAME") }
    }

    public var photoURL: URL? {
        didSet { set("photoUrl", photoURL?.absoluteString, deleting: "PHOTO_URL") }
    }

    private func set(_ field: String, _ value: String?, deleting attribute: String) {
        deletions.removeAll { $0 == attribute }
        changes[field] = nil
        if let value { changes[field] = value } else { deletions.append(attribute) }
    }

    public func commitChanges() async throws {
        var fields = changes
        if !deletions.isEmpty { fields["deleteAttribute"] = deletions }
        let body = AuthCallbacks.Unchecked(fields)
        try await user.update(body.value)
    }

    public func commitChanges(completion: (((any Error)?) -> Void)? = nil) {
        var fields = changes
        if !deletions.isEmpty { fields["deleteAttribute"] = deletions }
        let body = AuthCallbacks.Unchecked(fields)
        let user = self.user
        AuthCallbacks.run(on: user.auth?.callbackQueue ?? .main, completion) { try await user.update(body.value) }
    }
}
