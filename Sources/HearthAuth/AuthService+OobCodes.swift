import HearthProtocol
import Foundation
import HearthCrypto

extension AuthService {
    static let requestTypes = [
        "OOB_REQ_TYPE_UNSPECIFIED", "PASSWORD_RESET", "OLD_EMAIL_AGREE", "NEW_EMAIL_ACCEPT", "VERIFY_EMAIL",
        "RECOVER_EMAIL", "EMAIL_SIGNIN", "VERIFY_AND_CHANGE_EMAIL", "REVERT_SECOND_FACTOR_ADDITION",
    ]

    static func mode(of requestType: String) -> String {
        switch requestType {
        case "PASSWORD_RESET": "resetPassword"
        case "VERIFY_EMAIL": "verifyEmail"
        case "RECOVER_EMAIL": "recoverEmail"
        case "EMAIL_SIGNIN": "signIn"
        default: "verifyAndChangeEmail"
        }
    }

    /// The action link of a code (docs/auth.md §6.2):
    /// `<base>/emulator/action?mode=…&lang=en&oobCode=…&apiKey=…[&continueUrl=…]`.
    func link(for code: OobCode, request: HTTPRequest, apiKey: String?) -> String {
        let base = configuration.publicURL ?? "http://" + (request.headers["host"] ?? "localhost")
        var query: [URLQueryItem] = [
            URLQueryItem(name: "mode", value: Self.mode(of: code.requestType)), URLQueryItem(name: "lang", value: "en"),
            URLQueryItem(name: "oobCode", value: code.code), URLQueryItem(name: "apiKey", value: apiKey ?? "fake-api-key"),
        ]
        if let continueUrl = code.continueUrl { query.append(URLQueryItem(name: "continueUrl", value: continueUrl)) }
        var components = URLComponents()
        components.queryItems = query
        return base + "/emulator/action" + (components.string ?? "")
    }

    // MARK: sendOobCode (docs/auth.md §2.5)

    func sendOobCode(_ call: AuthCall) throws -> [String: Any] {
        let body = call.body
        guard let requestType = body.enumValue("requestType", cases: Self.requestTypes),
            requestType != "OOB_REQ_TYPE_UNSPECIFIED"
        else { throw AuthError.invalid("MISSING_REQ_TYPE") }
        let returnLink = body.bool("returnOobLink") == true
        if requestType == "EMAIL_SIGNIN" && !call.isAdmin && !signInMethods.emailLink {
            throw AuthError.invalid("OPERATION_NOT_ALLOWED", "Email link sign-in is disabled for this project.")
        }
        if returnLink && !call.isAdmin { throw AuthError.invalid("INSUFFICIENT_PERMISSION") }
        let continueUrl = body.string("continueUrl")
        if let continueUrl { try checkContinueURL(continueUrl) }
        // Where a mobile app's link opens (Firebase Hosting, or the retired Dynamic Links): only a domain
        // this server may send links to, as Firebase allows only its project's own.
        for name in ["linkDomain", "dynamicLinkDomain"] {
            if let domain = body.string(name), !authorizedHosts.contains(Self.normalizedHost(domain)) {
                throw AuthError.invalid(
                    "INVALID_HOSTING_LINK_DOMAIN",
                    "The provided hosting link domain is not configured in Firebase Hosting or is not owned by the current project. This cannot be a default hosting domain (web.app or firebaseapp.com).")
            }
        }

        var user: UserRecord
        var newEmail: String?
        switch requestType {
        case "EMAIL_SIGNIN":
            // Passwordless sign-in: works for unknown addresses (the account is created when the link is used).
            guard let email = body.string("email") else { throw AuthError.missingEmail }
            guard let canonical = Self.canonicalEmail(email) else { throw AuthError.invalidEmail }
            guard continueUrl != nil else { throw AuthError.invalid("MISSING_CONTINUE_URI") }
            user = try store.user(email: canonical) ?? UserRecord(localId: "", createdAt: now)
            user.email = canonical
        case "VERIFY_EMAIL":
            if let idToken = body.string("idToken") {
                user = try authenticateUser(idToken: idToken).user
            } else if call.isAdmin, let email = body.string("email") {
                guard let canonical = Self.canonicalEmail(email) else { throw AuthError.invalidEmail }
                guard let found = try store.user(email: canonical) else { throw AuthError.userNotFound }
                user = found
            } else {
                throw AuthError.missingIDToken
            }
            guard user.email != nil else { throw AuthError.missingEmail }
        case "PASSWORD_RESET":
            guard let email = body.string("email") else { throw AuthError.missingEmail }
            guard let canonical = Self.canonicalEmail(email) else { throw AuthError.invalidEmail }
            guard let found = try store.user(email: canonical) else {
                if protectsEmails && !returnLink {
                    return ["kind": "identitytoolkit#GetOobConfirmationCodeResponse", "email": canonical]
                }
                throw AuthError.invalid("EMAIL_NOT_FOUND")
            }
            user = found
        case "VERIFY_AND_CHANGE_EMAIL":
            // JS verifyBeforeUpdateEmail: the link goes to the new address and changes the email when used.
            if let idToken = body.string("idToken") {
                user = try authenticateUser(idToken: idToken).user
            } else if call.isAdmin, let email = body.string("email").flatMap(Self.canonicalEmail) {
                guard let found = try store.user(email: email) else { throw AuthError.userNotFound }
                user = found
            } else {
                throw AuthError.missingIDToken
            }
            guard let rawNewEmail = body.string("newEmail") else { throw AuthError.invalid("MISSING_NEW_EMAIL") }
            guard let canonical = Self.canonicalEmail(rawNewEmail) else { throw AuthError.invalidEmail }
            newEmail = canonical
            if try store.user(email: canonical) != nil {
                if protectsEmails && !returnLink {
                    return ["kind": "identitytoolkit#GetOobConfirmationCodeResponse", "email": user.email ?? canonical]
                }
                throw AuthError.emailExists
            }
        default:
            throw AuthError.invalid("OPERATION_NOT_ALLOWED", "\(requestType) codes are not supported by Hearth yet")
        }
        let email = user.email ?? ""
        if !call.isAdmin && !emailsPerAddress.take(newEmail ?? email, nowMilliseconds: now) {
            throw requestType == "PASSWORD_RESET" ? AuthError.invalid("RESET_PASSWORD_EXCEED_LIMIT") : AuthError.tooManyAttempts
        }
        // An hour for codes that sign in or change credentials, 72 h for verifying an address (docs/auth.md §6.1).
        let lifetime = requestType == "VERIFY_EMAIL" ? configuration.verifyEmailLifetime : configuration.passwordResetLifetime
        // 40 random bytes: 54 base64url characters, like Firebase's codes.
        let code = OobCode(
            code: Base64URL.encode(SecureRandom.bytes(40)), requestType: requestType, uid: user.localId, email: email,
            newEmail: newEmail, createdAt: now, expiresAt: now + lifetime, outboxShowsCode: outboxDeliversCodes,
            continueUrl: continueUrl)
        try store.insertOobCode(code)
        var response: [String: Any] = ["kind": "identitytoolkit#GetOobConfirmationCodeResponse", "email": email]
        let actionLink = link(for: code, request: call.request, apiKey: call.apiKey)
        if returnLink {
            response["oobCode"] = code.code
            response["oobLink"] = actionLink
        } else if let deliver = configuration.deliverEmail {
            let message = Self.email(for: code, link: actionLink, project: configuration.projectID)
            DispatchQueue.global(qos: .utility).async(group: deliveries) { deliver(message) }
        }
        return response
    }

    /// The plain-text email that carries a code's link.
    static func email(for code: OobCode, link: String, project: String) -> OutgoingEmail {
        switch code.requestType {
        case "PASSWORD_RESET":
            return OutgoingEmail(
                to: code.email, subject: "Reset your password for \(project)",
                body: """
                    Hello,

                    Follow this link to reset the \(project) password for your \(code.email) account.

                    \(link)

                    If you didn't ask to reset your password, you can ignore this email.
                    """,
                requestType: code.requestType)
        case "EMAIL_SIGNIN":
            return OutgoingEmail(
                to: code.email, subject: "Sign in to \(project)",
                body: """
                    Hello,

                    Follow this link to sign in to \(project) with your \(code.email) account.

                    \(link)

                    If you didn't ask to sign in, you can ignore this email.
                    """,
                requestType: code.requestType)
        case "VERIFY_AND_CHANGE_EMAIL":
            let address = code.newEmail ?? code.email
            return OutgoingEmail(
                to: address, subject: "Verify your new email for \(project)",
                body: """
                    Hello,

                    Follow this link to make \(address) the email address of your \(project) account.

                    \(link)

                    If you didn't ask to change your email address, you can ignore this email.
                    """,
                requestType: code.requestType)
        default:
            return OutgoingEmail(
                to: code.email, subject: "Verify your email for \(project)",
                body: """
                    Hello,

                    Follow this link to verify your email address.

                    \(link)

                    If you didn't ask to verify this address, you can ignore this email.
                    """,
                requestType: code.requestType)
        }
    }

    /// Whether the outbox is how codes reach people (emulator mode, or no mailer): only then does the store
    /// keep each code itself, for the outbox to list; otherwise only its SHA-256.
    var outboxDeliversCodes: Bool { configuration.emulator || configuration.deliverEmail == nil }

    /// A stored, unexpired code (expired ones are deleted on sight).
    func liveCode(_ code: String) throws -> OobCode {
        guard let found = try store.oobCode(code) else { throw AuthError.invalidOobCode }
        if found.expiresAt <= now {
            try store.deleteOobCode(code)
            throw AuthError.expiredOobCode
        }
        return found
    }

    /// `accounts:update` with `oobCode` (docs/auth.md §2.4a): verifies the email.
    func applyOobCode(_ code: String) throws -> [String: Any] {
        let oob = try liveCode(code)
        guard oob.requestType == "VERIFY_EMAIL" || oob.requestType == "VERIFY_AND_CHANGE_EMAIL" else {
            throw AuthError.invalidOobCode
        }
        let changesEmail = oob.requestType == "VERIFY_AND_CHANGE_EMAIL" && oob.newEmail != nil
        let time = now
        let updated: UserRecord?
        do {
            updated = try store.modify(id: oob.uid) { user in
                guard (user.email ?? "") == oob.email else { throw AuthError.invalidOobCode }
                if user.disabled { throw AuthError.userDisabled }
                if changesEmail, let newEmail = oob.newEmail {
                    // An email change ends other sessions, as a direct change does (docs/auth.md §2.4a).
                    user.initialEmail = user.initialEmail ?? user.email
                    user.email = newEmail
                    user.validSince = time / 1000
                }
                user.emailVerified = true
            }
        } catch is AccountStoreConflict {
            throw AuthError.emailExists
        }
        guard let user = updated else { throw AuthError.invalidOobCode }
        var response = setAccountInfoResponse(user)
        if changesEmail {
            try store.revokeRefreshTokens(uid: user.localId)
            response["newEmail"] = oob.newEmail
        }
        try store.deleteOobCode(code)
        return response
    }

    // MARK: signInWithEmailLink (docs/auth.md §2.10)

    func signInWithEmailLink(_ call: AuthCall) throws -> [String: Any] {
        let body = call.body
        guard signInMethods.emailLink else {
            throw AuthError.invalid("OPERATION_NOT_ALLOWED", "Email link sign-in is disabled for this project.")
        }
        guard let code = body.string("oobCode") else { throw AuthError.missingOobCode }
        guard let rawEmail = body.string("email") else { throw AuthError.missingEmail }
        guard let email = Self.canonicalEmail(rawEmail) else { throw AuthError.invalidEmail }
        let oob = try liveCode(code)
        guard oob.requestType == "EMAIL_SIGNIN" else { throw AuthError.invalidOobCode }
        guard oob.email == email else {
            throw AuthError.invalid("INVALID_EMAIL", "The email provided does not match the sign-in email address.")
        }
        let time = now
        var isNew = false
        var user: UserRecord
        do {
            if let idToken = body.string("idToken") {
                // Link the address to the signed-in (for example anonymous) account.
                let current = try authenticateUser(idToken: idToken).user
                guard let updated = try store.modify(id: current.localId, { fresh in
                    fresh.email = email
                    fresh.emailVerified = true
                    fresh.usesEmailLink = true
                    fresh.lastLoginAt = time
                    fresh.lastRefreshAt = time
                }) else { throw AuthError.userNotFound }
                user = updated
            } else if let existing = try store.user(email: email) {
                guard let updated = try store.modify(id: existing.localId, { fresh in
                    if fresh.disabled { throw AuthError.userDisabled }
                    fresh.emailVerified = true  // the link reached the inbox
                    fresh.usesEmailLink = true
                    fresh.lastLoginAt = time
                    fresh.lastRefreshAt = time
                }) else { throw AuthError.userNotFound }
                user = updated
            } else {
                user = UserRecord(localId: Self.newLocalID(), createdAt: time)
                user.email = email
                user.emailVerified = true
                user.usesEmailLink = true
                user.lastLoginAt = time
                user.lastRefreshAt = time
                try beforeCreate(&user, call, provider: "password")
                try store.insert(user)
                isNew = true
            }
        } catch is AccountStoreConflict {
            throw AuthError.emailExists
        }
        try store.deleteOobCode(code)
        var response: [String: Any] = [
            "kind": "identitytoolkit#EmailLinkSigninResponse", "email": email, "localId": user.localId, "isNewUser": isNew,
        ]
        response.merge(try signInTokens(for: user, call, provider: "password", isNewUser: isNew)) { $1 }
        return response
    }

    // MARK: resetPassword (docs/auth.md §2.6)

    func resetPassword(_ call: AuthCall) throws -> [String: Any] {
        let body = call.body
        guard let code = body.string("oobCode") else { throw AuthError.missingOobCode }
        let oob = try liveCode(code)
        guard let newPassword = body.string("newPassword") else {
            var response: [String: Any] = ["kind": "identitytoolkit#ResetPasswordResponse", "requestType": oob.requestType]
            if oob.requestType != "EMAIL_SIGNIN" { response["email"] = oob.email }
            if let newEmail = oob.newEmail { response["newEmail"] = newEmail }
            return response
        }
        guard oob.requestType == "PASSWORD_RESET" else { throw AuthError.invalidOobCode }
        try Self.checkPasswordStrength(newPassword)
        let credential = try hashPassword(newPassword)
        let time = now
        let updated = try store.modify(id: oob.uid) { user in
            guard user.email == oob.email else { throw AuthError.invalidOobCode }
            if user.disabled { throw AuthError.userDisabled }
            user.password = credential
            user.passwordUpdatedAt = time
            user.emailVerified = true  // the link reached the inbox
            user.validSince = time / 1000
        }
        guard let user = updated else { throw AuthError.invalidOobCode }
        try store.revokeRefreshTokens(uid: user.localId)
        try store.deleteOobCode(code)
        failedSignIns.reset(oob.email)
        return ["kind": "identitytoolkit#ResetPasswordResponse", "requestType": "PASSWORD_RESET", "email": oob.email]
    }
}
