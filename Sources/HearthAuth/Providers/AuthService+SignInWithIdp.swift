import Foundation
import HearthCrypto
import HearthProtocol

/// `accounts:signInWithIdp` (v3 `verifyAssertion`): signing in, signing up or linking with an identity
/// provider's credential (docs/auth.md §2.13). One account per email address, as Firebase projects have
/// by default: a provider's *verified* address signs in to the account that has it (and takes the
/// password off it if that account's own address was never verified, so whoever set that password
/// cannot keep a way in); an unverified one is answered `needConfirmation`, so the app asks the user to
/// sign in the way they did before and link.
extension AuthService {
    func signInWithIdp(_ call: AuthCall) throws -> [String: Any] {
        let body = call.body
        if body.has("pendingIdToken") { throw AuthError.notImplemented("pendingIdToken") }
        if let address = call.request.remoteAddress, !configuration.emulator, !attemptsPerIP.take(address, nowMilliseconds: now) {
            throw AuthError.tooManyAttempts
        }
        let credential = try IdpCredential.parse(requestUri: body.string("requestUri"), postBody: body.string("postBody"))
        if body.has("pendingToken") && credential.idToken == nil && credential.accessToken == nil {
            // Hearth never hands out pending tokens, so one it is shown is not its own.
            throw AuthError.invalid("INVALID_PENDING_TOKEN", "The pending token is not one this server issued")
        }
        let identity = try identity(for: credential)
        do {
            if let idToken = body.string("idToken") { return try link(identity, toUserOf: idToken, call) }
            return try signIn(identity, autoCreate: body.bool("autoCreate") ?? true, call)
        } catch let error as AuthError where body.bool("returnIdpCredential") == true && Self.answeredWithCredential.contains(error.code) {
            // The SDKs read the provider's credential from this answer, so the app can sign in with it.
            var response = identity.responseFields
            response["errorMessage"] = error.code
            return response
        }
    }

    /// The refusals answered as a 200 carrying the provider's credential when `returnIdpCredential` is set.
    static let answeredWithCredential: Set<String> = ["FEDERATED_USER_ID_ALREADY_LINKED", "EMAIL_EXISTS"]

    /// Signing in (or up) as whoever the provider says the user is.
    private func signIn(_ identity: ProviderIdentity, autoCreate: Bool, _ call: AuthCall) throws -> [String: Any] {
        let time = now
        if let known = try store.user(providerId: identity.providerId, rawId: identity.rawId) {
            // A returning user: only the provider's own entry is refreshed, never the account's profile.
            let user = try modifyForSignIn(known.localId, time) { user in user.upsert(identity.linkedProvider) }
            return try signedIn(user, identity, isNew: false, call)
        }
        if let email = identity.email, let owner = try store.user(email: email) {
            guard identity.emailVerified else {
                var response = identity.responseFields
                response["needConfirmation"] = true
                response["localId"] = owner.localId
                response["verifiedProvider"] = owner.providerIDs.filter { $0 != "password" && $0 != "phone" }
                return response
            }
            var recycled = false
            var revoked = false
            let user = try modifyForSignIn(owner.localId, time) { user in
                if !user.emailVerified {
                    // Whoever set this password never proved the address: the provider's user now owns it.
                    revoked = user.password != nil || user.phoneNumber != nil
                    user.password = nil
                    user.passwordUpdatedAt = nil
                    user.usesEmailLink = nil
                    user.phoneNumber = nil
                    user.validSince = time / 1000
                }
                user.emailVerified = true
                user.displayName = identity.displayName
                user.photoUrl = identity.photoUrl
                recycled = user.linkedProviders?.contains { $0.providerId == identity.providerId && $0.rawId != identity.rawId } == true
                user.upsert(identity.linkedProvider)
            }
            if revoked { try store.revokeRefreshTokens(uid: user.localId) }
            var response = try signedIn(user, identity, isNew: false, call)
            if recycled { response["emailRecycled"] = true }
            return response
        }
        guard autoCreate else { throw AuthError.userNotFound }  // reauthentication finds no account
        var user = UserRecord(localId: Self.newLocalID(), createdAt: time)
        user.email = identity.email
        user.emailVerified = identity.email != nil && identity.emailVerified
        user.displayName = identity.displayName
        user.photoUrl = identity.photoUrl
        user.linkedProviders = [identity.linkedProvider]
        user.lastLoginAt = time
        user.lastRefreshAt = time
        try beforeCreate(&user, call, provider: identity.providerId)
        do {
            try store.insert(user)
        } catch let conflict as AccountStoreConflict {
            throw Self.conflictError(conflict)  // the same identity or address, signed up a moment ago
        }
        return try signedIn(user, identity, isNew: true, call)
    }

    /// Linking the provider's user to the signed-in account of `idToken`.
    private func link(_ identity: ProviderIdentity, toUserOf idToken: String, _ call: AuthCall) throws -> [String: Any] {
        let (context, found) = try authenticateUser(idToken: idToken)
        if try store.user(providerId: identity.providerId, rawId: identity.rawId) != nil {
            throw AuthError.invalid("FEDERATED_USER_ID_ALREADY_LINKED")
        }
        if let email = identity.email, let owner = try store.user(email: email), owner.localId != found.localId {
            throw AuthError.emailExists
        }
        let time = now
        let updated: UserRecord?
        do {
            updated = try store.modify(id: found.localId) { user in
                if user.disabled { throw AuthError.userDisabled }
                if user.email == nil, let email = identity.email {
                    user.email = email
                    user.emailVerified = identity.emailVerified
                } else if identity.emailVerified && user.email == identity.email {
                    user.emailVerified = true
                }
                if user.displayName == nil { user.displayName = identity.displayName }
                if user.photoUrl == nil { user.photoUrl = identity.photoUrl }
                user.upsert(identity.linkedProvider)
                user.lastLoginAt = time
            }
        } catch let conflict as AccountStoreConflict {
            throw Self.conflictError(conflict)
        }
        guard let user = updated else { throw AuthError.userNotFound }
        var response = identity.responseFields
        response["localId"] = user.localId
        if user.email == identity.email { response["emailVerified"] = user.emailVerified }
        response.merge(try signInTokens(for: user, call, provider: identity.providerId, isNewUser: false, authTime: context.authTime)) { $1 }
        return response
    }

    /// Applies a sign-in's change to the account, refusing a disabled one.
    private func modifyForSignIn(_ uid: String, _ time: Int64, _ change: @escaping (inout UserRecord) -> Void) throws -> UserRecord {
        let updated: UserRecord?
        do {
            updated = try store.modify(id: uid) { user in
                if user.disabled { throw AuthError.userDisabled }
                change(&user)
                user.lastLoginAt = time
                user.lastRefreshAt = time
            }
        } catch let conflict as AccountStoreConflict {
            throw Self.conflictError(conflict)
        }
        guard let updated else { throw AuthError.userNotFound }
        return updated
    }

    private func signedIn(_ user: UserRecord, _ identity: ProviderIdentity, isNew: Bool, _ call: AuthCall) throws -> [String: Any] {
        var response = identity.responseFields
        response["localId"] = user.localId
        if user.email == identity.email { response["emailVerified"] = user.emailVerified }
        if isNew { response["isNewUser"] = true }
        response.merge(try signInTokens(for: user, call, provider: identity.providerId, isNewUser: isNew)) { $1 }
        return response
    }
}

extension UserRecord {
    /// Adds the provider's entry, or replaces the entry of the same provider (one per provider).
    mutating func upsert(_ provider: LinkedProvider) {
        var providers = linkedProviders ?? []
        providers.removeAll { $0.providerId == provider.providerId }
        providers.append(provider)
        linkedProviders = providers
    }

    /// The account's providers as `providerUserInfo` lists them.
    var providerIDs: [String] {
        var ids: [String] = []
        if hasPasswordProvider { ids.append("password") }
        if phoneNumber != nil { ids.append("phone") }
        ids += (linkedProviders ?? []).map(\.providerId)
        return ids
    }
}
