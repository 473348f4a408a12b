import Foundation
import HearthCrypto

extension AuthService {
    // MARK: User JSON

    /// The base64 of "REDACTED": what Firebase returns as `passwordHash` (docs/auth.md §2.3). A non-empty
    /// value matters: the JS SDK keeps a user marked anonymous without it.
    static let redactedHash = "UkVEQUNURUQ="

    /// A user as `accounts:lookup` and `batchGet` answer it; times as strings of ms, validSince of seconds.
    func userInfo(_ user: UserRecord) -> [String: Any] {
        var info: [String: Any] = [
            "localId": user.localId, "emailVerified": user.emailVerified, "disabled": user.disabled,
            "validSince": String(user.validSince), "createdAt": String(user.createdAt),
        ]
        if let email = user.email { info["email"] = email }
        if let name = user.displayName { info["displayName"] = name }
        if let photo = user.photoUrl { info["photoUrl"] = photo }
        if let phone = user.phoneNumber { info["phoneNumber"] = phone }
        if user.password != nil { info["passwordHash"] = Self.redactedHash }
        if let updated = user.passwordUpdatedAt { info["passwordUpdatedAt"] = updated }
        if let login = user.lastLoginAt { info["lastLoginAt"] = String(login) }
        if let refresh = user.lastRefreshAt { info["lastRefreshAt"] = Self.rfc3339(refresh) }
        if let claims = user.customAttributes { info["customAttributes"] = claims }
        info["providerUserInfo"] = providerUserInfo(user)
        return info
    }

    static func rfc3339(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    // MARK: signUp (docs/auth.md §2.1)

    func signUp(_ call: AuthCall) throws -> [String: Any] {
        let body = call.body
        if call.privileged && !body.has("idToken") { return try adminCreate(body) }
        if body.has("localId") { throw AuthError.invalid("UNEXPECTED_PARAMETER", "User ID") }
        let email = body.string("email"), password = body.string("password"), idToken = body.string("idToken")
        if let address = call.request.remoteAddress, !configuration.emulator {
            guard attemptsPerIP.take(address, nowMilliseconds: now), signUpsPerIP.take(address, nowMilliseconds: now) else {
                throw AuthError.tooManyAttempts
            }
        }
        if email == nil && password == nil && idToken == nil {
            guard signInMethods.anonymous else { throw AuthError.invalid("ADMIN_ONLY_OPERATION") }
            let user = UserRecord(localId: Self.newLocalID(), createdAt: now)
            try store.insert(user)
            var response: [String: Any] = ["kind": "identitytoolkit#SignupNewUserResponse", "localId": user.localId]
            response.merge(try issueTokens(for: user, provider: "anonymous")) { $1 }
            return response
        }
        guard let rawEmail = email else { throw AuthError.missingEmail }
        guard let password else { throw AuthError.missingPassword }
        guard signInMethods.emailPassword else {
            throw AuthError.invalid("OPERATION_NOT_ALLOWED", "Password sign-in is disabled for this project.")
        }
        guard let canonical = Self.canonicalEmail(rawEmail) else { throw AuthError.invalidEmail }
        if try store.user(email: canonical) != nil { throw AuthError.emailExists }
        try Self.checkPasswordStrength(password)

        let linked = try idToken.map { try authenticateUser(idToken: $0).user }  // link: upgrade this (anonymous) account
        let credential = try hashPassword(password)
        let time = now
        func attach(_ user: inout UserRecord) {
            user.email = canonical
            user.emailVerified = false
            user.password = credential
            user.passwordUpdatedAt = time
            if let name = body.string("displayName") { user.displayName = name }
        }
        var user: UserRecord
        do {
            if let linked {
                guard let updated = try store.modify(id: linked.localId, attach) else { throw AuthError.userNotFound }
                user = updated
            } else {
                user = UserRecord(localId: Self.newLocalID(), createdAt: time)
                user.lastLoginAt = time
                user.lastRefreshAt = time
                attach(&user)
                try beforeCreate(&user, call, provider: "password")
                try store.insert(user)
            }
        } catch is AccountStoreConflict {
            throw AuthError.emailExists
        }
        var response: [String: Any] = [
            "kind": "identitytoolkit#SignupNewUserResponse", "localId": user.localId, "email": canonical,
        ]
        if let name = user.displayName { response["displayName"] = name }
        response.merge(try signInTokens(for: user, call, provider: "password", isNewUser: linked == nil)) { $1 }
        return response
    }

    /// firebase-admin's `create_user`: any attributes, optional uid, no tokens.
    private func adminCreate(_ body: RequestBody) throws -> [String: Any] {
        let uid = body.string("localId") ?? Self.newLocalID()
        guard !uid.isEmpty, uid.utf8.count <= 128 else { throw AuthError.invalid("INVALID_LOCAL_ID") }
        if try store.user(id: uid) != nil { throw AuthError.invalid("DUPLICATE_LOCAL_ID") }
        var user = UserRecord(localId: uid, createdAt: now)
        try prepareAdminChanges(body).apply(to: &user)
        if let email = user.email, try store.user(email: email) != nil { throw AuthError.emailExists }
        do { try store.insert(user) } catch let conflict as AccountStoreConflict { throw Self.conflictError(conflict) }
        var response: [String: Any] = ["kind": "identitytoolkit#SignupNewUserResponse", "localId": uid]
        if let email = user.email { response["email"] = email }
        if let phone = user.phoneNumber { response["phoneNumber"] = phone }
        if let name = user.displayName { response["displayName"] = name }
        return response
    }

    /// The attributes admins may set on create and update, validated and (for a password) hashed up front,
    /// so that applying them inside ``AccountStore/modify(id:_:)`` is quick and needs no store calls.
    struct AdminChanges {
        var email: String?
        var password: PasswordCredential?
        var displayName: String?
        var photoUrl: String?
        var emailVerified: Bool?
        var disabled: Bool?
        var customAttributes: String?
        var validSince: Int64?
        var phoneNumber: String?
        var linkProvider: LinkedProvider?
        var time: Int64

        func apply(to user: inout UserRecord) {
            if let email, email != user.email { user.email = email }
            if let password {
                user.password = password
                user.passwordUpdatedAt = time
                user.validSince = time / 1000
            }
            if let displayName { user.displayName = displayName }
            if let photoUrl { user.photoUrl = photoUrl }
            if let emailVerified { user.emailVerified = emailVerified }
            if let disabled { user.disabled = disabled }
            if let customAttributes { user.customAttributes = customAttributes == "{}" ? nil : customAttributes }
            if let validSince { user.validSince = validSince }
            if let phoneNumber { user.phoneNumber = phoneNumber }
            if let linkProvider {
                var providers = (user.linkedProviders ?? []).filter { $0.providerId != linkProvider.providerId }
                providers.append(linkProvider)
                user.linkedProviders = providers
            }
        }
    }

    func prepareAdminChanges(_ body: RequestBody) throws -> AdminChanges {
        var changes = AdminChanges(time: now)
        if let phone = body.string("phoneNumber") { changes.phoneNumber = try Self.checkedPhoneNumber(phone) }
        if let link = body.fields["linkProviderUserInfo"] as? [String: Any] {
            changes.linkProvider = try Self.linkedProvider(RequestBody(fields: link))
        }
        if let email = body.string("email") {
            guard let canonical = Self.canonicalEmail(email) else { throw AuthError.invalidEmail }
            changes.email = canonical
        }
        if let password = body.string("password") {
            try Self.checkPasswordStrength(password)
            changes.password = try hashPassword(password)
        }
        changes.displayName = body.string("displayName")
        changes.photoUrl = body.string("photoUrl")
        changes.emailVerified = body.bool("emailVerified")
        changes.disabled = body.bool("disabled") ?? body.bool("disableUser")
        if let claims = body.string("customAttributes") {
            try Self.validateCustomAttributes(claims)
            changes.customAttributes = claims
        }
        changes.validSince = body.int64("validSince")
        return changes
    }

    // MARK: signInWithPassword (docs/auth.md §2.2)

    func signInWithPassword(_ call: AuthCall) throws -> [String: Any] {
        let body = call.body
        guard let rawEmail = body.string("email") else { throw AuthError.missingEmail }
        guard let email = Self.canonicalEmail(rawEmail) else { throw AuthError.invalidEmail }
        guard let password = body.string("password"), !password.isEmpty else { throw AuthError.missingPassword }
        guard signInMethods.emailPassword else {
            throw AuthError.invalid("PASSWORD_LOGIN_DISABLED", "Password sign-in is disabled for this project.")
        }
        let time = now
        if let address = call.request.remoteAddress, !configuration.emulator,
            !attemptsPerIP.take(address, nowMilliseconds: time)
        {
            throw AuthError.tooManyAttempts
        }
        guard failedSignIns.allows(email, nowMilliseconds: time) else { throw AuthError.tooManyAttempts }
        let found = try store.user(email: email)
        // Unknown emails cost one argon2id verification too, so timing does not reveal accounts.
        guard verifyPassword(password, found?.password), var user = found else {
            _ = failedSignIns.take(email, nowMilliseconds: time)
            if protectsEmails { throw AuthError.invalidLoginCredentials }
            throw found == nil ? AuthError.invalid("EMAIL_NOT_FOUND") : AuthError.invalid("INVALID_PASSWORD")
        }
        if user.disabled { throw AuthError.userDisabled }
        var upgraded: PasswordCredential?
        if case .firebaseScrypt = user.password {
            upgraded = try hashPassword(password)  // imported hash: upgrade to argon2id (docs/auth.md §7.2)
        } else if case .argon2id(let stored) = user.password, configuration.passwordHasher.needsRehash(stored) {
            upgraded = try hashPassword(password)
        }
        let verified = user.password
        guard let current = try store.modify(id: user.localId, { fresh in
            if fresh.disabled { throw AuthError.userDisabled }  // disabled while the hash was checked
            // Changed while the hash was checked: the password just verified is no longer the account's.
            guard fresh.password == verified else { throw AuthError.invalidLoginCredentials }
            if let upgraded { fresh.password = upgraded }
            fresh.lastLoginAt = time
            fresh.lastRefreshAt = time
        }) else { throw AuthError.invalidLoginCredentials }
        user = current
        var response: [String: Any] = [
            "kind": "identitytoolkit#VerifyPasswordResponse", "localId": user.localId, "email": email,
            "displayName": user.displayName ?? "", "registered": true,
        ]
        response.merge(try signInTokens(for: user, call, provider: "password", isNewUser: false)) { $1 }
        return response
    }

    // MARK: lookup (docs/auth.md §2.3)

    func lookup(_ call: AuthCall) throws -> [String: Any] {
        let body = call.body
        if call.privileged && !body.has("idToken") {
            let users = try adminLookup(body)
            var response: [String: Any] = ["kind": "identitytoolkit#GetAccountInfoResponse"]
            if !users.isEmpty { response["users"] = users.map(userInfo) }  // omitted when empty (docs/auth.md §2.3)
            return response
        }
        guard let idToken = body.string("idToken") else { throw AuthError.missingIDToken }
        let user = try authenticateUser(idToken: idToken).user
        return ["kind": "identitytoolkit#GetAccountInfoResponse", "users": [userInfo(user)]]
    }

    // MARK: update (docs/auth.md §2.4)

    func update(_ call: AuthCall) throws -> [String: Any] {
        let body = call.body
        if let code = body.string("oobCode") { return try applyOobCode(code) }
        if call.privileged && !body.has("idToken") {
            guard let uid = body.string("localId") else { throw AuthError.missingLocalID }
            let changes = try prepareAdminChanges(body)
            var revoked = false
            let updated: UserRecord?
            do {
                updated = try store.modify(id: uid) { user in
                    let before = user.validSince
                    changes.apply(to: &user)
                    Self.deleteAttributes(body, from: &user)
                    revoked = user.validSince != before
                }
            } catch let conflict as AccountStoreConflict {
                throw Self.conflictError(conflict)
            }
            guard updated != nil else { throw AuthError.userNotFound }
            if revoked { try store.revokeRefreshTokens(uid: uid) }
            return ["kind": "identitytoolkit#SetAccountInfoResponse", "localId": uid]
        }
        guard let idToken = body.string("idToken") else {
            throw AuthError.invalid("INVALID_REQ_TYPE", "Unsupported request parameters.")
        }
        if body.has("customAttributes") { throw AuthError.invalid("INSUFFICIENT_PERMISSION") }
        if body.has("disableUser") { throw AuthError.invalid("OPERATION_NOT_ALLOWED") }
        let (context, found) = try authenticateUser(idToken: idToken)
        // Validate and hash first; then apply everything in one atomic change.
        var newEmail: String?
        if let email = body.string("email") {
            guard let canonical = Self.canonicalEmail(email) else { throw AuthError.invalidEmail }
            if canonical != found.email {
                // Under email-enumeration protection Firebase refuses the direct change (its EMAIL_EXISTS would
                // reveal accounts); clients use sendOobCode VERIFY_AND_CHANGE_EMAIL (docs/auth.md §8.1).
                if protectsEmails {
                    throw AuthError.invalid("OPERATION_NOT_ALLOWED", "Please verify the new email before changing email.")
                }
                if try store.user(email: canonical) != nil { throw AuthError.emailExists }
                newEmail = canonical
            }
        }
        var credential: PasswordCredential?
        if let password = body.string("password") {
            try Self.checkPasswordStrength(password)
            credential = try hashPassword(password)
        }
        let revokes = newEmail != nil || credential != nil
        let time = now
        let updated: UserRecord?
        do {
            updated = try store.modify(id: found.localId) { user in
                if user.disabled { throw AuthError.userDisabled }
                if body.isNull("displayName") { user.displayName = nil }
                if body.isNull("photoUrl") { user.photoUrl = nil }
                if let name = body.string("displayName") { user.displayName = name }
                if let photo = body.string("photoUrl") { user.photoUrl = photo }
                Self.deleteAttributes(body, from: &user)
                if let newEmail {
                    user.initialEmail = user.initialEmail ?? user.email
                    user.email = newEmail
                    user.emailVerified = false
                }
                if let credential {
                    user.password = credential
                    user.passwordUpdatedAt = time
                }
                if revokes { user.validSince = time / 1000 }
            }
        } catch is AccountStoreConflict {
            throw AuthError.emailExists
        }
        guard let user = updated else { throw AuthError.userNotFound }
        if revokes { try store.revokeRefreshTokens(uid: user.localId) }
        var response = setAccountInfoResponse(user)
        if body.bool("returnSecureToken") == true || revokes {
            // A fresh session, so the caller's own change does not sign it out (docs/auth.md T5).
            let provider = user.isAnonymous ? "anonymous" : (context.provider == "anonymous" ? "password" : context.provider)
            let authTime = context.authTime ?? nowSeconds
            response.merge(try issueTokens(for: user, provider: provider, authTime: authTime)) { $1 }
        }
        return response
    }

    static func deleteAttributes(_ body: RequestBody, from user: inout UserRecord) {
        let names = ["USER_ATTRIBUTE_NAME_UNSPECIFIED", "EMAIL", "DISPLAY_NAME", "PROVIDER", "PHOTO_URL", "PASSWORD", "RAW_USER_INFO"]
        var attributes: [String] = []
        if let array = body.fields["deleteAttribute"] as? [Any] {
            for item in array {
                if let name = item as? String { attributes.append(name) }
                if let index = (item as? NSNumber)?.intValue, names.indices.contains(index) { attributes.append(names[index]) }
            }
        }
        for attribute in attributes {
            switch attribute {
            case "DISPLAY_NAME": user.displayName = nil
            case "PHOTO_URL": user.photoUrl = nil
            case "PASSWORD": user.password = nil
            case "EMAIL":
                user.email = nil
                user.emailVerified = false
            default: break
            }
        }
        for provider in body.strings("deleteProvider") {
            switch provider {
            case "password":
                user.password = nil
                user.usesEmailLink = nil
                user.email = nil
                user.emailVerified = false
            case "phone":
                user.phoneNumber = nil
            default:
                user.linkedProviders = user.linkedProviders?.filter { $0.providerId != provider }
                if user.linkedProviders?.isEmpty == true { user.linkedProviders = nil }
            }
        }
    }

    func setAccountInfoResponse(_ user: UserRecord) -> [String: Any] {
        var response: [String: Any] = [
            "kind": "identitytoolkit#SetAccountInfoResponse", "localId": user.localId, "emailVerified": user.emailVerified,
            "providerUserInfo": providerUserInfo(user),
        ]
        if let email = user.email { response["email"] = email }
        if let name = user.displayName { response["displayName"] = name }
        if let photo = user.photoUrl { response["photoUrl"] = photo }
        if let phone = user.phoneNumber { response["phoneNumber"] = phone }
        if user.password != nil { response["passwordHash"] = Self.redactedHash }
        return response
    }

    // MARK: delete (docs/auth.md §2.7)

    func deleteAccount(_ call: AuthCall) throws -> [String: Any] {
        let body = call.body
        if call.privileged && !body.has("idToken") {
            guard let uid = body.string("localId") else { throw AuthError.missingLocalID }
            guard try store.delete(id: uid) else { throw AuthError.userNotFound }
        } else {
            guard let idToken = body.string("idToken") else { throw AuthError.missingIDToken }
            let user = try authenticateUser(idToken: idToken).user
            try store.delete(id: user.localId)
        }
        return ["kind": "identitytoolkit#DeleteAccountResponse"]
    }

    // MARK: createAuthUri (docs/auth.md §2.9)

    func createAuthUri(_ call: AuthCall) throws -> [String: Any] {
        let body = call.body
        guard let identifier = body.string("identifier") else { throw AuthError.invalid("MISSING_IDENTIFIER") }
        guard let email = Self.canonicalEmail(identifier) else { throw AuthError.invalid("INVALID_IDENTIFIER") }
        guard let continueUri = body.string("continueUri") else { throw AuthError.invalid("MISSING_CONTINUE_URI") }
        // Only parsed, as Firebase's emulator does: no link is sent and nothing is redirected to it, and
        // FirebaseAuth's iOS SDK always sends `http://www.google.com/` here (fetchSignInMethods).
        _ = try Self.continueURLHost(continueUri)
        var response: [String: Any] = [
            "kind": "identitytoolkit#CreateAuthUriResponse", "sessionId": Base64URL.encode(SecureRandom.bytes(18)),
        ]
        if protectsEmails && !call.isAdmin { return response }
        let user = try store.user(email: email)
        let methods = user?.signInMethods ?? []
        response["registered"] = user != nil
        response["allProviders"] = methods
        response["signinMethods"] = methods
        return response
    }

    // MARK: signInWithCustomToken (docs/auth.md §2.8)

    func signInWithCustomToken(_ call: AuthCall) throws -> [String: Any] {
        guard let token = call.body.string("token"), !token.isEmpty else { throw AuthError.invalid("MISSING_CUSTOM_TOKEN") }
        guard let header = JWT.unverifiedHeader(token), let payload = JWT.unverifiedPayload(token) else {
            throw AuthError.invalid("INVALID_CUSTOM_TOKEN", "The custom token format is incorrect. Please check the documentation.")
        }
        let algorithm = header["alg"] as? String
        if algorithm == "none" {
            guard configuration.emulator else {
                throw AuthError.invalid("INVALID_CUSTOM_TOKEN", "Unsigned custom tokens are accepted only in emulator mode.")
            }
        } else {
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            guard algorithm == "RS256", header["kid"] as? String == key.keyID, let signature = Base64URL.decode(parts[2]),
                key.publicKey.verifyRS256(Array("\(parts[0]).\(parts[1])".utf8), signature: signature)
            else {
                throw AuthError.invalid("INVALID_CUSTOM_TOKEN", "The custom token is not signed by this Hearth server.")
            }
            let expires = (payload["exp"] as? NSNumber).flatMap(RequestBody.exactInt64) ?? 0
            guard expires > nowSeconds else { throw AuthError.invalid("INVALID_CUSTOM_TOKEN", "The custom token has expired.") }
        }
        guard payload["aud"] as? String == Self.customTokenAudience else {
            throw AuthError.invalid("INVALID_CUSTOM_TOKEN", "The custom token has the wrong audience.")
        }
        guard let uid = (payload["uid"] as? String) ?? (payload["user_id"] as? String), !uid.isEmpty else {
            throw AuthError.invalid("MISSING_IDENTIFIER")
        }
        guard uid.utf8.count <= 128 else { throw AuthError.invalid("INVALID_CUSTOM_TOKEN", "uid is longer than 128 characters.") }
        var extraClaims: String?
        if let claims = payload["claims"] {
            guard let object = claims as? [String: Any] else { throw AuthError.invalid("INVALID_CLAIMS") }
            if let reserved = object.keys.sorted().first(where: Self.reservedClaims.contains) {
                throw AuthError.invalid("FORBIDDEN_CLAIM", reserved)
            }
            if !object.isEmpty { extraClaims = JSONText.encode(object) }
        }
        var user: UserRecord
        var isNew = false
        if let existing = try store.user(id: uid) {
            user = existing
            if user.disabled { throw AuthError.userDisabled }
        } else {
            user = UserRecord(localId: uid, createdAt: now)
            try store.insert(user)
            isNew = true
        }
        let time = now
        if let current = try store.modify(id: uid, { fresh in
            if fresh.disabled { throw AuthError.userDisabled }
            fresh.lastLoginAt = time
            fresh.lastRefreshAt = time
        }) {
            user = current
        }
        var response: [String: Any] = ["kind": "identitytoolkit#VerifyCustomTokenResponse", "isNewUser": isNew]
        response.merge(try issueTokens(for: user, provider: "custom", extraClaims: extraClaims)) { $1 }
        return response
    }
}
