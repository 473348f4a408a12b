import Foundation
import HearthCrypto

extension AuthService {
    // MARK: batchGet (§2.12): list_users

    func batchGet(_ call: AuthCall) throws -> [String: Any] {
        guard call.privileged else { throw AuthError.unauthenticated }
        let limit = Int(call.body.int64("maxResults") ?? 20)
        guard (1...1000).contains(limit) else { throw AuthError.invalid("INVALID_ARGUMENT", "maxResults must be 1–1000") }
        let after = call.body.string("nextPageToken").flatMap { $0.isEmpty ? nil : $0 }
        let users = try store.users(after: after, limit: limit)
        var response: [String: Any] = ["kind": "identitytoolkit#DownloadAccountResponse", "users": users.map(userInfo)]
        if users.count == limit, let last = users.last { response["nextPageToken"] = last.localId }
        return response
    }

    // MARK: batchCreate (§2.12): import_users

    func batchCreate(_ call: AuthCall) throws -> [String: Any] {
        guard call.privileged else { throw AuthError.unauthenticated }
        let body = call.body
        let users = body.objects("users")
        if users.isEmpty { throw AuthError.invalid("MISSING_USER_ACCOUNT") }
        if users.count > 1000 { throw AuthError.invalid("MAXIMUM_USER_COUNT_EXCEEDED") }
        var scrypt: FirebaseScrypt?
        if users.contains(where: { $0.has("passwordHash") }) {
            guard let algorithm = body.string("hashAlgorithm") else { throw AuthError.invalid("MISSING_HASH_ALGORITHM") }
            guard algorithm == "SCRYPT" else {
                throw AuthError.invalid("INVALID_HASH_ALGORITHM", "Hearth verifies Firebase SCRYPT hashes only, not \(algorithm)")
            }
            guard let signerKey = body.string("signerKey").flatMap(Base64URL.decode), !signerKey.isEmpty else {
                throw AuthError.invalid("INVALID_HASH_SIGNER_KEY")
            }
            let parameters = FirebaseScrypt(
                signerKey: signerKey, saltSeparator: body.string("saltSeparator").flatMap(Base64URL.decode) ?? [],
                rounds: Int(body.int64("rounds") ?? 8), memoryCost: Int(body.int64("memoryCost") ?? 14))
            guard parameters.isValid else { throw AuthError.invalid("INVALID_HASH_ROUNDS", "rounds 1–8, memoryCost 1–14") }
            scrypt = parameters
        }
        var seenIDs: Set<String> = [], seenEmails: Set<String> = []
        for user in users {
            if let uid = user.string("localId"), !seenIDs.insert(uid).inserted { throw AuthError.invalid("DUPLICATE_LOCAL_ID", uid) }
            if let email = user.string("email")?.lowercased(), !seenEmails.insert(email).inserted {
                throw AuthError.invalid("DUPLICATE_EMAIL", email)
            }
        }
        var errors: [[String: Any]] = []
        for (index, fields) in users.enumerated() {
            do {
                try importUser(fields, scrypt: scrypt)
            } catch let failure as ImportFailure {
                errors.append(["index": index, "message": failure.message])
            }
        }
        var response: [String: Any] = ["kind": "identitytoolkit#UploadAccountResponse"]
        if !errors.isEmpty { response["error"] = errors }  // singular, as Firebase answers (§2.12)
        return response
    }

    private struct ImportFailure: Error { let message: String }

    private func importUser(_ fields: RequestBody, scrypt: FirebaseScrypt?) throws {
        guard let uid = fields.string("localId"), !uid.isEmpty, uid.utf8.count <= 128 else {
            throw ImportFailure(message: "localId is missing")
        }
        if try store.user(id: uid) != nil {
            throw ImportFailure(message: "localId belongs to an existing account - can not overwrite.")
        }
        var user = UserRecord(localId: uid, createdAt: fields.int64("createdAt") ?? now)
        if let email = fields.string("email") {
            guard let canonical = Self.canonicalEmail(email) else { throw ImportFailure(message: "email is invalid") }
            user.email = canonical
        }
        user.emailVerified = fields.bool("emailVerified") ?? false
        user.displayName = fields.string("displayName")
        user.photoUrl = fields.string("photoUrl")
        user.disabled = fields.bool("disabled") ?? false
        user.lastLoginAt = fields.int64("lastLoginAt")
        if let claims = fields.string("customAttributes") {
            do { try Self.validateCustomAttributes(claims) } catch {
                throw ImportFailure(message: error.code == "CLAIMS_TOO_LARGE"
                    ? "Custom claims provided are too large." : error.code == "FORBIDDEN_CLAIM"
                    ? "Custom claims provided include a reserved claim." : "Invalid custom claims provided.")
            }
            user.customAttributes = claims
        }
        if let hashText = fields.string("passwordHash"), let scrypt {
            guard let hash = Base64URL.decode(hashText) else { throw ImportFailure(message: "passwordHash is invalid") }
            user.password = .firebaseScrypt(
                hash: hash, salt: fields.string("salt").flatMap(Base64URL.decode) ?? [], parameters: scrypt)
            user.passwordUpdatedAt = now
        } else if let raw = fields.string("rawPassword") {
            guard raw.utf16.count >= 6 else { throw ImportFailure(message: "password is too weak") }
            user.password = try hashPassword(raw)
            user.passwordUpdatedAt = now
        }
        do { try store.insert(user) } catch is AccountStoreConflict {
            throw ImportFailure(message: "email exists in other account in database")
        }
    }

    // MARK: batchDelete (§2.12): delete_users

    func batchDelete(_ call: AuthCall) throws -> [String: Any] {
        guard call.privileged else { throw AuthError.unauthenticated }
        let ids = call.body.strings("localIds")
        if ids.count > 1000 { throw AuthError.invalid("LOCAL_ID_LIST_EXCEEDS_LIMIT") }
        let force = call.body.bool("force") ?? false
        var errors: [[String: Any]] = []
        for (index, uid) in ids.enumerated() {
            guard let user = try store.user(id: uid) else { continue }  // unknown ids are skipped
            if !force && !user.disabled {
                errors.append(["index": index, "localId": uid, "message": "NOT_DISABLED : Disable the account before batch deletion."])
                continue
            }
            try store.delete(id: uid)
        }
        return errors.isEmpty ? [:] : ["errors": errors]
    }

    // MARK: query (§2.12)

    func queryAccounts(_ call: AuthCall) throws -> [String: Any] {
        guard call.privileged else { throw AuthError.unauthenticated }
        let limit = Int(call.body.int64("limit") ?? 500)
        let offset = Int(call.body.int64("offset") ?? 0)
        // Bounded so that `offset + limit` below cannot overflow.
        guard (1...500).contains(limit), (0...Int(Int32.max)).contains(offset) else {
            throw AuthError.invalid("INVALID_ARGUMENT", "limit 1–500, offset 0–2147483647")
        }
        if let sortBy = call.body.string("sortBy"), sortBy != "USER_ID" {
            throw AuthError.invalid("INVALID_ARGUMENT", "Hearth sorts by USER_ID only")
        }
        let total = try store.userCount()
        if call.body.bool("returnUserInfo") == false { return ["recordsCount": String(total)] }
        var users = try store.users(after: nil, limit: offset + limit)
        users = Array(users.dropFirst(offset))
        if call.body.string("order") == "DESC" { users.reverse() }
        return ["recordsCount": String(total), "userInfo": users.map(userInfo)]
    }
}
