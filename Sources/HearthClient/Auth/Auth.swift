public import Foundation
import HearthSupport

/// Firebase Auth for an app, as `Auth` in FirebaseAuth: email and password accounts, anonymous and custom
/// token sign-in, the signed-in user kept between runs, and ID tokens refreshed before they expire. The
/// app's databases send the user's token on their connections and follow every change of it.
///
///     let result = try await Auth.auth().signIn(withEmail: "ann@example.com", password: "secret123")
///     print(result.user.uid)
///
/// With a Hearth database URL (`http://localhost:9000?ns=demo`), auth goes to the same server;
/// with a Firebase one, to Google's; `useEmulator(withHost:port:)` points it anywhere.
open class Auth: NSObject, @unchecked Sendable {  // state behind a lock
    public private(set) weak var app: FirebaseApp?
    private let store: any AuthUserStore
    private let state: Locked<State>

    private struct State {
        var endpoint: AuthEndpoint
        var languageCode: String?
        var user: User?
        var callbackQueue = DispatchQueue.main
        var stateListeners: [ObjectIdentifier: Listener] = [:]
        var tokenListeners: [ObjectIdentifier: Listener] = [:]
        /// The app's databases, told when the token changes.
        var tokenObservers: [ObjectIdentifier: @Sendable () -> Void] = [:]
        var refreshTimer: Task<Void, Never>?
    }

    private struct Listener: @unchecked Sendable {  // an app's block, called on the callback queue
        let block: (Auth, User?) -> Void
    }

    private static let instances = Locked<[String: Auth]>([:])

    private init(app: FirebaseApp, store: (any AuthUserStore)? = nil) {
        self.app = app
        let options = app.configuredOptions
        let endpoint = AuthEndpoint.forOptions(options)
        #if canImport(Security)
            self.store = store ?? KeychainAuthUserStore(appName: app.name, apiKey: endpoint.apiKey)
        #else
            self.store = store ?? FileAuthUserStore(directory: ClientFiles.directory, appName: app.name, apiKey: endpoint.apiKey)
        #endif
        state = Locked(State(endpoint: endpoint))
        super.init()
        if let saved = self.store.load() {
            let user = User(auth: self, record: saved)
            state.withLock { $0.user = user }
            scheduleRefresh(of: user)
        }
    }

    /// The default app's auth; stops the program with an explanation when no app is configured.
    public class func auth() -> Auth {
        guard let app = FirebaseApp.app() else {
            fatalError("Auth.auth(): no default app. Call FirebaseApp.configure() first (with HEARTH_DATABASE_URL set, or options).")
        }
        return auth(app: app)
    }

    public class func auth(app: FirebaseApp) -> Auth { auth(app: app, store: nil) }

    /// The app's auth, made with `store` when it is made now (tests keep the user elsewhere).
    static func auth(app: FirebaseApp, store: (any AuthUserStore)?) -> Auth {
        instances.withLock { instances in
            if let existing = instances[app.name], existing.app === app { return existing }
            let auth = Auth(app: app, store: store)
            instances[app.name] = auth
            return auth
        }
    }

    static func appDeleted(_ app: FirebaseApp) {
        let removed = instances.withLock { $0.removeValue(forKey: app.name) }
        removed?.state.withLock { $0.refreshTimer?.cancel() }
    }

    // MARK: Settings

    public var currentUser: User? { state.withLock { $0.user } }

    /// Sent as `X-Firebase-Locale`: the language of the emails the server sends.
    public var languageCode: String? {
        get { state.withLock { $0.languageCode } }
        set { state.withLock { $0.languageCode = newValue } }
    }

    public func useAppLanguage() { languageCode = Locale.preferredLanguages.first }

    /// Where listeners and completion blocks run: the main queue, as in FirebaseAuth. (Hearth's addition:
    /// a command-line program that never runs the main queue sets a queue of its own, or uses `async`.)
    public var callbackQueue: DispatchQueue {
        get { state.withLock { $0.callbackQueue } }
        set { state.withLock { $0.callbackQueue = newValue } }
    }

    /// Sends every call to the server at `host:port` over plain HTTP (Hearth, or Firebase's emulator).
    public func useEmulator(withHost host: String, port: Int) {
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        state.withLock { $0.endpoint = .server(origin: "http://\(hostPart):\(port)", apiKey: $0.endpoint.apiKey) }
    }

    var backend: AuthBackend { state.withLock { AuthBackend(endpoint: $0.endpoint, languageCode: $0.languageCode) } }

    // MARK: Signing in

    @discardableResult
    public func signIn(withEmail email: String, password: String) async throws -> AuthDataResult {
        try await signIn(with: EmailAuthProvider.credential(withEmail: email, password: password))
    }

    public func signIn(withEmail email: String, password: String, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
        complete(completion) { try await self.signIn(withEmail: email, password: password) }
    }

    @discardableResult
    public func signIn(with credential: AuthCredential) async throws -> AuthDataResult {
        try Self.checkInput(credential, creating: false)
        if let credential = credential as? OAuthCredential {
            let answer = try await identityProviderAnswer(credential)
            return AuthDataResult(user: try await signedIn(try AuthBackend.grant(from: answer)), identityProviderAnswer: answer)
        }
        let grant = try await signInGrant(with: credential)
        return AuthDataResult(user: try await signedIn(grant), providerID: credential.provider, isNewUser: false)
    }

    public func signIn(with credential: AuthCredential, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
        complete(completion) { try await self.signIn(with: credential) }
    }

    /// Creates an account with an email and password, and signs in to it.
    @discardableResult
    public func createUser(withEmail email: String, password: String) async throws -> AuthDataResult {
        try Self.checkInput(EmailAuthProvider.credential(withEmail: email, password: password), creating: true)
        let answer = try await backend.call("signUp", ["email": email, "password": password, "returnSecureToken": true])
        let user = try await signedIn(try AuthBackend.grant(from: answer))
        return AuthDataResult(user: user, providerID: EmailAuthProvider.id, isNewUser: true)
    }

    public func createUser(withEmail email: String, password: String, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
        complete(completion) { try await self.createUser(withEmail: email, password: password) }
    }

    /// Signs in to a new anonymous account; when an anonymous user is signed in already, that user.
    @discardableResult
    public func signInAnonymously() async throws -> AuthDataResult {
        if let user = currentUser, user.isAnonymous { return AuthDataResult(user: user, providerID: "", isNewUser: false) }
        let answer = try await backend.call("signUp", ["returnSecureToken": true])
        return AuthDataResult(user: try await signedIn(try AuthBackend.grant(from: answer)), providerID: "", isNewUser: true)
    }

    public func signInAnonymously(completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
        complete(completion) { try await self.signInAnonymously() }
    }

    /// Signs in with a token your server made (firebase-admin's `create_custom_token`, or Hearth's).
    @discardableResult
    public func signIn(withCustomToken token: String) async throws -> AuthDataResult {
        let answer = try await backend.call("signInWithCustomToken", ["token": token, "returnSecureToken": true])
        let user = try await signedIn(try AuthBackend.grant(from: answer))
        return AuthDataResult(user: user, providerID: "", isNewUser: answer["isNewUser"] as? Bool ?? false)
    }

    public func signIn(withCustomToken token: String, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
        complete(completion) { try await self.signIn(withCustomToken: token) }
    }

    /// Signs out: the saved user is forgotten and the app's databases continue unauthenticated.
    public func signOut() throws {
        guard let user = currentUser else { return }
        signedOut(user)
    }

    // MARK: Emailed codes

    public func sendPasswordReset(withEmail email: String, actionCodeSettings: ActionCodeSettings? = nil) async throws {
        var body: [String: Any] = ["requestType": "PASSWORD_RESET", "email": email]
        actionCodeSettings?.add(to: &body)
        _ = try await backend.call("sendOobCode", body)
    }

    public func sendPasswordReset(withEmail email: String, completion: (((any Error)?) -> Void)? = nil) {
        sendPasswordReset(withEmail: email, actionCodeSettings: nil, completion: completion)
    }

    public func sendPasswordReset(
        withEmail email: String, actionCodeSettings: ActionCodeSettings?, completion: (((any Error)?) -> Void)? = nil
    ) {
        let settings = AuthCallbacks.Unchecked(actionCodeSettings)
        complete(completion) { try await self.sendPasswordReset(withEmail: email, actionCodeSettings: settings.value) }
    }

    public func confirmPasswordReset(withCode code: String, newPassword: String) async throws {
        _ = try await backend.call("resetPassword", ["oobCode": code, "newPassword": newPassword])
    }

    public func confirmPasswordReset(withCode code: String, newPassword: String, completion: @escaping ((any Error)?) -> Void) {
        complete(completion) { try await self.confirmPasswordReset(withCode: code, newPassword: newPassword) }
    }

    /// The email address a password-reset code is for.
    public func verifyPasswordResetCode(_ code: String) async throws -> String {
        let answer = try await backend.call("resetPassword", ["oobCode": code])
        return answer["email"] as? String ?? ""
    }

    public func verifyPasswordResetCode(_ code: String, completion: @escaping (String?, (any Error)?) -> Void) {
        complete(completion) { try await self.verifyPasswordResetCode(code) }
    }

    /// Applies an emailed code (verifying an address).
    public func applyActionCode(_ code: String) async throws {
        _ = try await backend.call("update", ["oobCode": code])
    }

    public func applyActionCode(_ code: String, completion: @escaping ((any Error)?) -> Void) {
        complete(completion) { try await self.applyActionCode(code) }
    }

    // MARK: Listeners

    /// Called at once with the current user, then whenever a different user signs in and on sign-out.
    @discardableResult
    public func addStateDidChangeListener(_ listener: @escaping (Auth, User?) -> Void) -> NSObjectProtocol {
        add(listener, to: \.stateListeners)
    }

    public func removeStateDidChangeListener(_ listenerHandle: NSObjectProtocol) {
        state.withLock { _ = $0.stateListeners.removeValue(forKey: ObjectIdentifier(listenerHandle)) }
    }

    /// Called at once, then on every sign-in, sign-out and token refresh.
    @discardableResult
    public func addIDTokenDidChangeListener(_ listener: @escaping (Auth, User?) -> Void) -> NSObjectProtocol {
        add(listener, to: \.tokenListeners)
    }

    public func removeIDTokenDidChangeListener(_ listenerHandle: NSObjectProtocol) {
        state.withLock { _ = $0.tokenListeners.removeValue(forKey: ObjectIdentifier(listenerHandle)) }
    }

    /// Registers `listener` and calls it once with the current user; the handle removes it.
    private func add(_ listener: @escaping (Auth, User?) -> Void, to list: WritableKeyPath<State, [ObjectIdentifier: Listener]>) -> NSObjectProtocol {
        let handle = NSObject()
        let (queue, user) = state.withLock { state in
            state[keyPath: list][ObjectIdentifier(handle)] = Listener(block: listener)
            return (state.callbackQueue, state.user)
        }
        call(Listener(block: listener), user, on: queue)
        return handle
    }

    /// The signed-in user as an async sequence (Hearth's addition): the current user first, then each
    /// change `addStateDidChangeListener` reports. Ending the loop removes the listener.
    public var authStateChanges: AsyncStream<User?> {
        AsyncStream { continuation in
            let handle = AuthCallbacks.Unchecked(
                self.addStateDidChangeListener { _, user in continuation.yield(AuthCallbacks.Unchecked(user).value) })
            continuation.onTermination = { [weak self] _ in self?.removeStateDidChangeListener(handle.value) }
        }
    }

    private func call(_ listener: Listener, _ user: User?, on queue: DispatchQueue) {
        queue.async { [self] in listener.block(self, user) }
    }

    // MARK: The session (used by User and Database)

    /// What FirebaseAuth refuses before any request: an empty email (`missingEmail`), an empty password
    /// (`weakPassword` for a new account, `wrongPassword` for a sign-in).
    static func checkInput(_ credential: AuthCredential, creating: Bool) throws {
        switch credential.kind {
        case .password(let email, let password):
            if email.isEmpty { throw AuthFailure.error(.missingEmail) }
            if password.isEmpty { throw AuthFailure.error(creating ? .weakPassword : .wrongPassword) }
        case .emailLink(let email, let link):
            if email.isEmpty { throw AuthFailure.error(.missingEmail) }
            if EmailLink.code(in: link) == nil { throw AuthFailure.error(.invalidActionCode) }
        case .identityProvider:
            guard let credential = credential as? OAuthCredential, credential.idToken != nil || credential.accessToken != nil else {
                throw AuthFailure.error(.invalidCredential, detail: "The credential has neither an ID token nor an access token.")
            }
        }
    }

    /// Tokens for a credential, without changing who is signed in.
    func signInGrant(with credential: AuthCredential) async throws -> TokenGrant {
        switch credential.kind {
        case .password(let email, let password):
            let answer = try await backend.call("signInWithPassword", ["email": email, "password": password, "returnSecureToken": true])
            return try AuthBackend.grant(from: answer)
        case .emailLink(let email, let link):
            guard let code = EmailLink.code(in: link) else { throw AuthFailure.error(.invalidActionCode) }
            let answer = try await backend.call("signInWithEmailLink", ["email": email, "oobCode": code, "returnSecureToken": true])
            return try AuthBackend.grant(from: answer)
        case .identityProvider:
            guard let credential = credential as? OAuthCredential else { throw AuthFailure.error(.invalidCredential) }
            return try AuthBackend.grant(from: try await identityProviderAnswer(credential))
        }
    }

    /// Makes the account behind `grant` the current user: its profile read, saved, listeners told.
    func signedIn(_ grant: TokenGrant) async throws -> User {
        let answer = try await backend.call("lookup", ["idToken": grant.idToken])
        let account = (answer["users"] as? [[String: Any]])?.first ?? [:]
        let user = User(auth: self, record: StoredUser(grant: grant, account: account))
        let (previous, queue, stateListeners) = state.withLock { state in
            let previous = state.user
            state.user = user
            return (previous, state.callbackQueue, state.stateListeners)
        }
        // Databases first, so that their connections send the new token before anything a state
        // listener does in answer (listening to the user's data) reaches them.
        tokensChanged(of: user)
        if previous?.uid != user.uid {
            for listener in stateListeners.values { call(listener, user, on: queue) }
        }
        return user
    }

    /// The user's tokens or profile changed: saved, ID-token listeners and databases told, the next
    /// refresh scheduled. Nothing happens for a user that is no longer the current one.
    func tokensChanged(of user: User) {
        let current = state.withLock { state -> (DispatchQueue, [Listener], [@Sendable () -> Void])? in
            guard state.user === user else { return nil }
            return (state.callbackQueue, Array(state.tokenListeners.values), Array(state.tokenObservers.values))
        }
        guard let (queue, listeners, observers) = current else { return }
        store.save(user.stored)
        for observer in observers { observer() }
        for listener in listeners { call(listener, user, on: queue) }
        scheduleRefresh(of: user)
    }

    /// The user's profile changed (`reload()`, a profile change): saved for the next start.
    func profileChanged(of user: User) {
        guard currentUser === user else { return }
        store.save(user.stored)
    }

    /// A call for `user` failed: when the server no longer honours the account (deleted, disabled,
    /// tokens revoked or expired), the app is signed out, as FirebaseAuth does.
    func failed(_ user: User, with error: any Error) {
        let code = AuthErrorCode(rawValue: (error as NSError).code)
        guard (error as NSError).domain == AuthErrors.domain,
            let code, [.userDisabled, .userNotFound, .userTokenExpired, .invalidUserToken].contains(code)
        else { return }
        ClientLog.warning("the signed-in account is no longer valid (\(error.localizedDescription)); signing out")
        signedOut(user)
    }

    func signedOut(_ user: User) {
        let current = state.withLock { state -> (DispatchQueue, [Listener], [@Sendable () -> Void])? in
            guard state.user === user else { return nil }
            state.user = nil
            state.refreshTimer?.cancel()
            state.refreshTimer = nil
            return (state.callbackQueue, Array(state.stateListeners.values) + Array(state.tokenListeners.values), Array(state.tokenObservers.values))
        }
        guard let (queue, listeners, observers) = current else { return }
        store.save(nil)
        for observer in observers { observer() }
        for listener in listeners { call(listener, nil, on: queue) }
    }

    /// Refreshes the token ahead of its expiry, so connections never hold an expired one.
    private func scheduleRefresh(of user: User) {
        let delay = max(0, user.stored.expiresAt.timeIntervalSinceNow - AuthLimits.refreshMarginSeconds)
        let timer = Task { [weak self, weak user] in
            var wait = delay
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: UInt64(min(wait, 86_400) * 1_000_000_000))
                guard !Task.isCancelled, let self, let user, self.currentUser === user else { return }
                do {
                    _ = try await user.refresh()  // schedules the next one
                    return
                } catch {
                    wait = AuthLimits.refreshRetrySeconds
                }
            }
        }
        let previous = state.withLock { state -> Task<Void, Never>? in
            defer { state.refreshTimer = timer }
            return state.refreshTimer
        }
        previous?.cancel()
    }

    /// The token a database connection sends: the current user's (refreshed first when due or when the
    /// server refused the last one); nil when signed out. When a refresh fails for a passing reason
    /// (the network), the token held is sent and the server decides.
    func tokenForDatabase(forceRefresh: Bool) async -> String? {
        guard let user = currentUser else { return nil }
        do {
            return try await user.getIDToken(forcingRefresh: forceRefresh)
        } catch {
            return currentUser === user ? user.stored.idToken : nil
        }
    }

    /// The token to send without waiting: `.some(nil)` when signed out, the user's token while it is
    /// fresh and no refresh is asked for; nil when a refresh must come first.
    func knownToken(forceRefresh: Bool) -> String?? {
        guard let user = currentUser else { return .some(nil) }
        let stored = user.stored
        guard !forceRefresh, stored.expiresAt.timeIntervalSinceNow > AuthLimits.refreshMarginSeconds else { return nil }
        return .some(stored.idToken)
    }

    /// A database follows this auth's token: `changed` runs on each sign-in, sign-out and refresh.
    func observeTokens(_ owner: AnyObject, _ changed: @escaping @Sendable () -> Void) {
        state.withLock { $0.tokenObservers[ObjectIdentifier(owner)] = changed }
    }

    func complete<Value>(_ completion: ((Value?, (any Error)?) -> Void)?, _ work: @escaping @Sendable () async throws -> Value) {
        AuthCallbacks.run(on: callbackQueue, completion, work)
    }

    func complete(_ completion: (((any Error)?) -> Void)?, _ work: @escaping @Sendable () async throws -> Void) {
        AuthCallbacks.run(on: callbackQueue, completion, work)
    }
}
