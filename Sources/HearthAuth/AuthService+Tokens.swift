import HearthCrypto

extension AuthService {
    /// `securetoken.googleapis.com/v1/token` (docs/auth.md §2.11): trades a refresh token for a new ID token.
    /// The refresh token stays valid until revoked (a password change, `validSince`, disabling or deleting the
    /// user), as Firebase's do: clients present the same one again by design (FirebaseAuth's iOS SDK retries a
    /// refresh with the token it already sent; an app and its extension, or two processes sharing a saved
    /// session, refresh with one token), and a rotated token signed them out with TOKEN_EXPIRED.
    func refresh(_ call: AuthCall) throws -> [String: Any] {
        let body = call.body
        guard let grantType = body.string("grantType") else { throw AuthError.invalid("MISSING_GRANT_TYPE") }
        guard grantType == "refresh_token" else { throw AuthError.invalid("INVALID_GRANT_TYPE") }
        guard let token = body.string("refreshToken"), !token.isEmpty else { throw AuthError.invalid("MISSING_REFRESH_TOKEN") }
        let hash = SHA256.hash(token)
        guard let record = try store.refreshToken(hash: hash) else { throw AuthError.invalid("INVALID_REFRESH_TOKEN") }
        // Account state first, as Firebase answers it: a disabled user's (also revoked) token says USER_DISABLED.
        guard let user = try store.user(id: record.uid) else { throw AuthError.userNotFound }
        if user.disabled { throw AuthError.userDisabled }
        if record.revoked || record.issuedAt < user.validSince { throw AuthError.tokenExpired }

        let issuedAt = nowSeconds
        let provider = record.provider == "anonymous" && !user.isAnonymous ? "password" : record.provider
        let idToken = try signIDToken(
            for: user, provider: provider, authTime: record.authTime, extraClaims: record.extraClaims, issuedAt: issuedAt)
        // lastRefreshAt is informational; updating it on every refresh would double the writes, so it is
        // written at most once a minute.
        let time = now
        if (user.lastRefreshAt ?? 0) + 60_000 < time {
            _ = try? store.modify(id: user.localId) { $0.lastRefreshAt = time }
        }
        pruneRevokedTokensHourly()
        return [
            "access_token": idToken, "expires_in": "3600", "token_type": "Bearer", "refresh_token": token,
            "id_token": idToken, "user_id": user.localId, "project_id": configuration.projectID,
        ]
    }

    /// `projects/{p}:createSessionCookie` (docs/auth.md §2.12, firebase-admin `create_session_cookie`): the ID
    /// token's claims re-signed with a lifetime of 5 minutes to 14 days and issuer
    /// `https://session.firebase.google.com/<project>`.
    func createSessionCookie(_ call: AuthCall) throws -> [String: Any] {
        guard call.privileged else { throw AuthError.unauthenticated }
        guard let idToken = call.body.string("idToken") else { throw AuthError.missingIDToken }
        guard let duration = call.body.int64("validDuration"), (300...1_209_600).contains(duration) else {
            throw AuthError.invalid("INVALID_DURATION", "The duration must be between 5 minutes and 14 days.")
        }
        let (context, _) = try authenticateUser(idToken: idToken)
        guard let payload = JWT.unverifiedPayload(idToken) else { throw AuthError.invalidIDToken }
        var claims = payload
        let issuedAt = nowSeconds
        claims["iss"] = "https://session.firebase.google.com/" + configuration.projectID
        claims["iat"] = issuedAt
        claims["exp"] = issuedAt + duration
        claims["sub"] = context.uid
        return ["sessionCookie": try JWT.sign(payload: claims, key: key)]
    }

    /// At most once an hour, drops revoked refresh tokens older than ``revokedTokenRetention``.
    func pruneRevokedTokensHourly() {
        let now = nowSeconds
        let due = lastPrune.withLock { last in
            guard now - last >= 3600 else { return false }
            last = now
            return true
        }
        if due { try? store.pruneRevokedRefreshTokens(issuedBefore: now - Self.revokedTokenRetention) }
    }
}
