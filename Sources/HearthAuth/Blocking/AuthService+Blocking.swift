import Foundation
import HearthCrypto
import HearthOutbound
import HearthProtocol
import HearthTriggers

/// Blocking auth hooks (``BlockingHooks``): where sign-ups and sign-ins ask them. As Firebase's blocking
/// functions, they are asked for accounts created by signing up (email and password, email link, an
/// identity provider) and for those sign-ins and links, never for anonymous accounts, custom tokens, token
/// refreshes or admin calls. The request is made on the calling thread (the auth queue's, never the
/// event loop's), bounded by the hook's timeout and the server's outbound address policy.
extension AuthService {
    /// The hooks in force (re-read from the storage at most once a second, ``SharedSetting``).
    public var blockingHooks: BlockingHooks { blockingHooksSetting.value }

    /// Asks the beforeCreate hook about an account a sign-up is about to create, and applies what it
    /// answered to `user` before it is stored. Throws when the hook refuses (or fails, closed).
    func beforeCreate(_ user: inout UserRecord, _ call: AuthCall, provider: String) throws {
        guard let trigger = blockingHooks.beforeCreate else { return }
        let changes = try ask(.beforeCreate, trigger, user: user, call: call, provider: provider, isNewUser: true)
        changes.apply(to: &user)
    }

    /// The tokens of a sign-in (or sign-up, or link), once the beforeSignIn hook let it through: what it
    /// answered is kept on the account first, and its session claims go into this session's ID tokens.
    func signInTokens(
        for user: UserRecord, _ call: AuthCall, provider: String, isNewUser: Bool, authTime: Int64? = nil
    ) throws -> [String: Any] {
        // An account the beforeCreate hook created disabled gets no session.
        if user.disabled { throw AuthError.userDisabled }
        guard let trigger = blockingHooks.beforeSignIn else { return try issueTokens(for: user, provider: provider, authTime: authTime) }
        let changes = try ask(.beforeSignIn, trigger, user: user, call: call, provider: provider, isNewUser: isNewUser)
        var signedIn = user
        if changes.changesAccount {
            guard let updated = try store.modify(id: user.localId, { changes.apply(to: &$0) }) else { throw AuthError.userNotFound }
            signedIn = updated
        }
        if signedIn.disabled { throw AuthError.userDisabled }
        return try issueTokens(for: signedIn, provider: provider, authTime: authTime, extraClaims: changes.sessionClaims)
    }

    /// One signed POST to the hook and what its answer means for the operation.
    private func ask(
        _ event: BlockingHooks.Event, _ trigger: BlockingHooks.Trigger, user: UserRecord, call: AuthCall, provider: String, isNewUser: Bool
    ) throws -> BlockingHookChanges {
        let time = now
        let body = BlockingHookRequest(
            eventId: Base64URL.encode(SecureRandom.bytes(15)), event: event, time: time, project: configuration.projectID, user: user,
            provider: provider, isNewUser: isNewUser, ipAddress: call.request.remoteAddress, userAgent: call.request.headers["user-agent"]
        ).body
        let signature = HookDelivery.signature(body: body, secret: trigger.secret, unixSeconds: time / 1000) { key, message in
            HMACSHA256.authenticate(message, key: key)
        }
        let request = OutboundRequest(
            url: trigger.url, method: "POST", headers: [("Content-Type", "application/json"), ("Hearth-Signature", signature)], body: body)
        let fetcher = HTTPFetcher(
            limits: OutboundLimits(
                connectSeconds: min(3, trigger.timeoutSeconds), totalSeconds: trigger.timeoutSeconds,
                responseBytesMax: ServerLimits.blockingHookResponseBytesMax),
            userAgent: "Hearth-Blocking/1", addresses: configuration.hookAddresses)
        let started = ContinuousClock.now
        let answer: BlockingHookAnswer
        do throws(OutboundError) {
            let response = try fetcher.fetch(request)
            answer = BlockingHookAnswer(status: response.status, body: response.body, event: event)
        } catch {
            answer = .failed(reason: error.description)
        }
        blockingStatus.record(event, answer, milliseconds: Int((ContinuousClock.now - started) / .milliseconds(1)), at: time)
        switch answer {
        case .allow(let changes):
            return changes
        case .deny(let message, let status):
            throw AuthError.blockingFunction(message: message, status: status)
        case .failed(let reason):
            let outcome = trigger.failOpen ? "let through (failOpen)" : "refused (set failOpen to let them through)"
            configuration.log("hearth: the \(event.rawValue) hook failed: \(reason); the \(isNewUser ? "sign-up" : "sign-in") was \(outcome).")
            if trigger.failOpen { return BlockingHookChanges() }
            throw AuthError.blockingFunction(message: "The \(event.rawValue) hook did not answer.", status: "UNAVAILABLE")
        }
    }
}

extension AuthError {
    /// A blocking hook refused, in Firebase's words (the JS SDK reads it as `auth/internal-error` with
    /// the hook's JSON in its message).
    static func blockingFunction(message: String, status: String) -> AuthError {
        let error = JSONText.encode(["error": ["message": message, "status": status] as [String: Any]], sorted: true)
        return .invalid("BLOCKING_FUNCTION_ERROR_RESPONSE", "HTTP Cloud Function returned an error: " + error)
    }
}
