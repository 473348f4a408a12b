import Foundation
import HearthCrypto

extension AuthService {
    // MARK: batchGet (docs/auth.md §2.12): list_users

    func batchGet(_ call: AuthCall) throws -> [String: Any] {
        guard call.privileged else { throw AuthError.unauthenticated }
        let limit = Int(call.body.int64("maxResults") ?? 20)
        guard (1...1000).contains(limit) else { throw AuthError.invalid("INVALID_ARGUMENT", "maxResults must be 1–1000") }
        let after = call.body.string("nextPageToken").flatMap { $0.isEmpty ? nil : $0 }
        let users = try store.users(after: after, limit: limit)
        var response: [String: Any] = ["kind": "identitytoolkit#DownloadAccountResponse", "users": users.map(exportInfo)]
        if users.count == limit, let last = users.last { response["nextPageToken"] = last.localId }
        return response
    }

    /// A user as an export shows it to an admin: with the password's hash and salt (standard base64),
    /// so that an import elsewhere verifies the same passwords. argon2id for passwords set on Hearth (its
    /// parameters in docs/auth.md, and re-imported with `hashAlgorithm: "ARGON2ID"`); Firebase's scrypt,
    /// with the original project's parameters, for imported users who have not signed in since.
    func exportInfo(_ user: UserRecord) -> [String: Any] {
        var info = userInfo(user)
        switch user.password {
        case .argon2id(let phc):
            if let parts = Argon2idPHC(phc: phc) {
                info["passwordHash"] = Data(parts.hash).base64EncodedString()
                info["salt"] = Data(parts.salt).base64EncodedString()
                // Hearth's addition: how to verify this hash (batchCreate takes the same names).
                info["passwordHashParameters"] = [
                    "algorithm": "ARGON2ID", "memoryCost": parts.memoryKiB, "rounds": parts.iterations, "parallelization": parts.parallelism,
                ]
            }
        case .firebaseScrypt(let hash, let salt, _):
            info["passwordHash"] = Data(hash).base64EncodedString()
            info["salt"] = Data(salt).base64EncodedString()
            // The rest of its parameters are the Firebase project's (its console), not stored per user.
            info["passwordHashParameters"] = ["algorithm": "SCRYPT"]
        case nil:
            break
        }
        return info
    }

    // MARK: batchCreate (docs/auth.md §2.12): import_users

    func batchCreate(_ call: AuthCall) throws -> [String: Any] {
        guard call.privileged else { throw AuthError.unauthenticated }
        let body = call.body
        let users = body.objects("users")
        if users.isEmpty { throw AuthError.invalid("MISSING_USER_ACCOUNT") }
        if users.count > 1000 { throw AuthError.invalid("MAXIMUM_USER_COUNT_EXCEEDED") }
        var hashing: ImportedHash?
        if users.contains(where: { $0.has("passwordHash") }) {
            guard let algorithm = body.string("hashAlgorithm") else { throw AuthError.invalid("MISSING_HASH_ALGORITHM") }
            switch algorithm {
            case "SCRYPT":
                guard let signerKey = body.string("signerKey").flatMap(Base64URL.decode), !signerKey.isEmpty else {
                    throw AuthError.invalid("INVALID_HASH_SIGNER_KEY")
                }
                let parameters = FirebaseScrypt(
                    signerKey: signerKey, saltSeparator: body.string("saltSeparator").flatMap(Base64URL.decode) ?? [],
                    rounds: Int(body.int64("rounds") ?? 8), memoryCost: Int(body.int64("memoryCost") ?? 14))
                guard parameters.isValid else { throw AuthError.invalid("INVALID_HASH_ROUNDS", "rounds 1–8, memoryCost 1–14") }
                hashing = .scrypt(parameters)
            case "ARGON2ID":
                // Hearth's own exports (docs/auth.md): memoryCost in KiB, rounds = passes, one lane.
                guard let memory = body.int64("memoryCost"), let rounds = body.int64("rounds"),
                    (8...(1 << 32)).contains(memory), (1...Int64(UInt32.max)).contains(rounds), (body.int64("parallelization") ?? 1) == 1
                else { throw AuthError.invalid("INVALID_HASH_ROUNDS", "ARGON2ID needs memoryCost (KiB, ≥ 8), rounds (≥ 1) and parallelization 1") }
                hashing = .argon2id(memoryKiB: Int(memory), iterations: Int(rounds))
            default:
                throw AuthError.invalid("INVALID_HASH_ALGORITHM", "Hearth verifies Firebase SCRYPT and its own ARGON2ID hashes, not \(algorithm)")
            }
        }
        var seenIDs: Set<String> = [], seenEmails: Set<String> = [], seenPhones: Set<String> = []
        for user in users {
            if let uid = user.string("localId"), !seenIDs.insert(uid).inserted { throw AuthError.invalid("DUPLICATE_LOCAL_ID", uid) }
            if let email = user.string("email")?.lowercased(), !seenEmails.insert(email).inserted {
                throw AuthError.invalid("DUPLICATE_EMAIL", email)
            }
            if let phone = user.string("phoneNumber"), !seenPhones.insert(phone).inserted {
                throw AuthError.invalid("DUPLICATE_PHONE_NUMBER", phone)
            }
        }
        var errors: [[String: Any]] = []
        for (index, fields) in users.enumerated() {
            do {
                try importUser(fields, hashing: hashing)
            } catch let failure as ImportFailure {
                errors.append(["index": index, "message": failure.message])
            }
        }
        var response: [String: Any] = ["kind": "identitytoolkit#UploadAccountResponse"]
        if !errors.isEmpty { response["error"] = errors }  // singular, as Firebase answers (docs/auth.md §2.12)
        return response
    }

    private struct ImportFailure: Error { let message: String }

    /// How the hashes of an import were made.
    enum ImportedHash {
        case scrypt(FirebaseScrypt)
        case argon2id(memoryKiB: Int, iterations: Int)
    }

    private func importUser(_ fields: RequestBody, hashing: ImportedHash?) throws {
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
        if let phone = fields.string("phoneNumber") {
            do { user.phoneNumber = try Self.checkedPhoneNumber(phone) } catch { throw ImportFailure(message: "phone number is invalid") }
        }
        var providers: [LinkedProvider] = []
        for entry in fields.objects("providerUserInfo") {
            // Firebase's export lists `password` and `phone` among the providers; they are the account's own.
            if ["password", "phone"].contains(entry.string("providerId") ?? "") { continue }
            do { providers.append(try Self.linkedProvider(entry)) } catch { throw ImportFailure(message: error.message) }
        }
        if !providers.isEmpty { user.linkedProviders = providers }
        if let claims = fields.string("customAttributes") {
            do { try Self.validateCustomAttributes(claims) } catch {
                throw ImportFailure(message: error.code == "CLAIMS_TOO_LARGE"
                    ? "Custom claims provided are too large." : error.code == "FORBIDDEN_CLAIM"
                    ? "Custom claims provided include a reserved claim." : "Invalid custom claims provided.")
            }
            user.customAttributes = claims
        }
        if let hashText = fields.string("passwordHash"), let hashing {
            guard let hash = Base64URL.decode(hashText) else { throw ImportFailure(message: "passwordHash is invalid") }
            let salt = fields.string("salt").flatMap(Base64URL.decode) ?? []
            switch hashing {
            case .scrypt(let parameters):
                user.password = .firebaseScrypt(hash: hash, salt: salt, parameters: parameters)
            case .argon2id(let memory, let iterations):
                let parts = Argon2idPHC(memoryKiB: memory, iterations: iterations, parallelism: 1, salt: salt, hash: hash)
                guard parts.isValid else { throw ImportFailure(message: "passwordHash or salt is invalid for ARGON2ID") }
                user.password = .argon2id(parts.phc)
            }
            user.passwordUpdatedAt = now
        } else if let raw = fields.string("rawPassword") {
            guard raw.utf16.count >= 6 else { throw ImportFailure(message: "password is too weak") }
            user.password = try hashPassword(raw)
            user.passwordUpdatedAt = now
        }
        do { try store.insert(user) } catch let conflict as AccountStoreConflict {
            switch conflict.field {
            case .phoneNumber: throw ImportFailure(message: "phone number exists in other account in database")
            case .provider: throw ImportFailure(message: "federated user ID exists in other account in database")
            case .id: throw ImportFailure(message: "localId belongs to an existing account - can not overwrite.")
            case .email: throw ImportFailure(message: "email exists in other account in database")
            }
        }
    }

    // MARK: batchDelete (docs/auth.md §2.12): delete_users

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

    // MARK: query (docs/auth.md §2.12)

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
        let users = try store.users(offset: offset, limit: limit, descending: call.body.string("order") == "DESC")
        return ["recordsCount": String(total), "userInfo": users.map(userInfo)]
    }
}
