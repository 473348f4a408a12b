import HearthProtocol
import Foundation
import HearthAuth
import HearthAuthPostgres
import HearthAuthSQLite
import HearthCrypto

/// `hearth users list|add|disable|enable|delete|export|import`: the accounts in `<data>/auth.sqlite`,
/// or in PostgreSQL with `--storage URL` (or `HEARTH_STORAGE`), where a cluster's nodes keep them.
///
/// Each subcommand is one call to the same AuthService code the admin REST API runs (as an admin with a
/// one-off credential), so validation, hashing and import rules are the server's. Safe while `hearth
/// serve` runs: the database serialises the writers, and the server's account cache notices the change.
enum UsersCommand {
    static let usage = """
        Usage: hearth users <subcommand> [--data DIR | --storage postgresql://…]

          list                          uid, email, flags of every account
          add EMAIL PASSWORD [NAME]     create an email/password account (prints its uid)
          disable UID | enable UID      stop or allow sign-ins and token refreshes (disable also ends sessions)
          delete UID                    delete an account, its sessions and codes
          export                        Firebase auth:export JSON on standard output, with each password's
                                        hash, salt and parameters (argon2id: another Hearth imports them;
                                        Firebase cannot verify argon2id)
          import FILE [--hash-key B64 --salt-separator B64 --rounds N --mem-cost N]
                                        Firebase auth:export JSON, or a Hearth export (its argon2id
                                        passwords verify as before); with a Firebase project's scrypt
                                        parameters (Firebase console, Users, Password hash parameters)
                                        its users keep their passwords, re-hashed with argon2id at their
                                        first sign-in

        """

    private static let project = "hearth-cli"

    static func run<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
        output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        var positional: [String] = []
        var options: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "-h" || argument == "--help" {
                print(usage, terminator: "", to: &output)
                return .success
            }
            if argument.hasPrefix("--") {
                let parts = argument.dropFirst(2).split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2 {
                    options[parts[0]] = parts[1]
                    index += 1
                } else if index + 1 < arguments.count {
                    options[parts[0]] = arguments[index + 1]
                    index += 2
                } else {
                    print("hearth users: \(argument) needs a value.", to: &errorOutput)
                    return .usageError
                }
            } else {
                positional.append(argument)
                index += 1
            }
        }
        let known: Set<String> = ["data", "storage", "hash-key", "salt-separator", "rounds", "mem-cost"]
        if let unknown = options.keys.sorted().first(where: { !known.contains($0) }) {
            print("hearth users: unknown option '--\(unknown)'.\n\(usage)", terminator: "", to: &errorOutput)
            return .usageError
        }
        guard let subcommand = positional.first else {
            print(usage, terminator: "", to: &errorOutput)
            return .usageError
        }
        let operands = Array(positional.dropFirst())
        let admin = Base64URL.encode(SecureRandom.bytes(24))
        let configuration = AuthConfiguration(projectID: project, emulator: false, adminToken: admin)
        let service: AuthService
        if let storage = options["storage"] ?? environment["HEARTH_STORAGE"] {
            do {
                service = try AuthService.open(postgresURL: storage, configuration: configuration)
            } catch {
                print("hearth users: cannot open the accounts in PostgreSQL: \(error).", to: &errorOutput)
                return .failure
            }
        } else {
            let directory = options["data"] ?? DataCommands.defaultDataDirectory
            guard FileManager.default.fileExists(atPath: directory) else {
                print("hearth users: no data directory at \(directory) (use --data DIR, or --storage URL for a cluster's PostgreSQL).", to: &errorOutput)
                return .failure
            }
            do {
                service = try AuthService.open(dataDirectory: directory, configuration: configuration)
            } catch {
                print("hearth users: cannot open the accounts in \(directory): \(error).", to: &errorOutput)
                return .failure
            }
        }
        // Its threads (the account cache's listener, the checkpoints) end before the process does.
        defer { service.close() }
        let client = AdminClient(service: service, token: admin)

        switch (subcommand, operands.count) {
        case ("list", 0):
            let users = client.allUsers()
            for user in users {
                var flags: [String] = []
                if user["emailVerified"] as? Bool == true { flags.append("verified") }
                if user["disabled"] as? Bool == true { flags.append("disabled") }
                if user["passwordHash"] == nil { flags.append("no-password") }
                print("\(user["localId"] as? String ?? "")\t\(user["email"] as? String ?? "-")\t\(flags.joined(separator: ","))", to: &output)
            }
            print("\(users.count) account\(users.count == 1 ? "" : "s")", to: &errorOutput)
            return .success
        case ("add", 2), ("add", 3):
            var body: [String: Any] = ["email": operands[0], "password": operands[1]]
            if operands.count == 3 { body["displayName"] = operands[2] }
            return finish(client.call("accounts", body), errorOutput: &errorOutput) {
                print($0["localId"] as? String ?? "", to: &output)
            }
        case ("disable", 1), ("enable", 1):
            var body: [String: Any] = ["localId": operands[0], "disableUser": subcommand == "disable"]
            if subcommand == "disable" { body["validSince"] = Int(Date().timeIntervalSince1970) }
            return finish(client.call("accounts:update", body), errorOutput: &errorOutput) { _ in
                print("\(subcommand)d \(operands[0])", to: &output)
            }
        case ("delete", 1):
            return finish(client.call("accounts:delete", ["localId": operands[0]]), errorOutput: &errorOutput) { _ in
                print("deleted \(operands[0])", to: &output)
            }
        case ("export", 0):
            let users = client.allUsers().map(exported)
            output.write(JSONText.pretty(["users": users]))
            let scrypt = users.filter { ($0["passwordHashParameters"] as? [String: Any])?["algorithm"] as? String == "SCRYPT" }.count
            if scrypt > 0 {
                print("\(scrypt) account\(scrypt == 1 ? "" : "s") imported from Firebase have not signed in since: their scrypt hashes "
                    + "verify only with that project's parameters (pass them to 'hearth users import' with --hash-key …).", to: &errorOutput)
            }
            return .success
        case ("import", 1):
            return importUsers(file: operands[0], options: options, client: client, output: &output, errorOutput: &errorOutput)
        default:
            print("hearth users: '\(positional.joined(separator: " "))' is not a users command.\n\(usage)", terminator: "", to: &errorOutput)
            return .usageError
        }
    }

    /// Prints the error of a failed call, or hands the answer to `success`.
    private static func finish<ErrorOutput: TextOutputStream>(
        _ result: (json: [String: Any]?, error: String?), errorOutput: inout ErrorOutput, success: ([String: Any]) -> Void
    ) -> ExitCode {
        guard let json = result.json else {
            print("hearth users: \(result.error ?? "failed")", to: &errorOutput)
            return .failure
        }
        success(json)
        return .success
    }

    /// A user in `firebase auth:export`'s JSON shape, with the hash's parameters (Hearth's addition).
    static func exported(_ user: [String: Any]) -> [String: Any] {
        var entry: [String: Any] = ["localId": user["localId"] ?? "", "providerUserInfo": user["providerUserInfo"] ?? [Any]()]
        for key in [
            "email", "emailVerified", "displayName", "photoUrl", "phoneNumber", "createdAt", "disabled", "customAttributes",
            "passwordHash", "salt", "passwordHashParameters", "lastRefreshAt",
        ] {
            if let value = user[key] { entry[key] = value }
        }
        if let login = user["lastLoginAt"] { entry["lastSignedInAt"] = login }
        return entry
    }

    private static func importUsers<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        file: String, options: [String: String], client: AdminClient, output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        guard let data = FileManager.default.contents(atPath: file),
            let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any], let users = object["users"] as? [Any]
        else {
            print("hearth users import: \(file) is not Firebase auth:export JSON ({\"users\": [...]}).", to: &errorOutput)
            return .failure
        }
        var scrypt: [String: Any]?
        if let key = options["hash-key"] {
            scrypt = [
                "hashAlgorithm": "SCRYPT", "signerKey": key, "saltSeparator": options["salt-separator"] ?? "",
                "rounds": Int(options["rounds"] ?? "8") ?? 8, "memoryCost": Int(options["mem-cost"] ?? "14") ?? 14,
            ]
        }
        // Users go in batches of the same hash parameters: a Hearth export's argon2id ones, the Firebase
        // project's scrypt ones from the options, or none (the password is not imported).
        var groups: [(parameters: [String: Any], users: [(position: Int, user: [String: Any])])] = []
        var dropped = 0
        for (position, item) in users.enumerated() {
            guard var user = item as? [String: Any] else { continue }
            if let login = user.removeValue(forKey: "lastSignedInAt") { user["lastLoginAt"] = login }
            let stated = user.removeValue(forKey: "passwordHashParameters") as? [String: Any]
            var parameters: [String: Any] = [:]
            if user["passwordHash"] != nil {
                if let stated, stated["algorithm"] as? String == "ARGON2ID" {
                    parameters = ["hashAlgorithm": "ARGON2ID", "memoryCost": stated["memoryCost"] ?? 0, "rounds": stated["rounds"] ?? 0,
                                  "parallelization": stated["parallelization"] ?? 1]
                } else if let scrypt {
                    parameters = scrypt
                } else {
                    user["passwordHash"] = nil
                    user["salt"] = nil
                    dropped += 1
                }
            }
            let key = (parameters as NSDictionary)
            if let index = groups.firstIndex(where: { ($0.parameters as NSDictionary) == key }) {
                groups[index].users.append((position, user))
            } else {
                groups.append((parameters, [(position, user)]))
            }
        }
        var imported = 0, failed = 0
        for group in groups {
            var start = 0
            while start < group.users.count {
                let batch = Array(group.users[start..<min(group.users.count, start + 1000)])
                var body = group.parameters
                body["users"] = batch.map(\.user)
                let result = client.call("accounts:batchCreate", body)
                guard let answer = result.json else {
                    print("hearth users import: \(result.error ?? "failed")", to: &errorOutput)
                    return .failure
                }
                let errors = answer["error"] as? [[String: Any]] ?? []
                for error in errors {
                    let index = (error["index"] as? Int) ?? 0
                    let position = batch.indices.contains(index) ? batch[index].position : index
                    print("hearth users import: user \(position): \(error["message"] as? String ?? "failed")", to: &errorOutput)
                }
                failed += errors.count
                imported += batch.count - errors.count
                start += 1000
            }
        }
        let note = dropped == 0 ? "" : " (\(dropped) password\(dropped == 1 ? "" : "s") not imported: pass the Firebase project's --hash-key …)"
        print("imported \(imported), failed \(failed)\(note)", to: &errorOutput)
        return failed == 0 ? .success : .failure
    }
}

/// Calls the admin endpoints of an in-process AuthService.
private struct AdminClient {
    let service: AuthService
    let token: String

    func request(_ method: HTTPRequest.Method, _ operation: String, _ body: [String: Any], query: [(name: String, value: String)] = [])
        -> (status: Int, json: [String: Any])
    {
        let response = service.handle(HTTPRequest(
            method: method, path: "/identitytoolkit.googleapis.com/v1/projects/hearth-cli/\(operation)", queryItems: query,
            headers: ["authorization": "Bearer \(token)", "content-type": "application/json"],
            body: Array(JSONText.pretty(body).utf8)))
        return (response.status, (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:])
    }

    /// The answer of a POST, or the error message Firebase's envelope carries.
    func call(_ operation: String, _ body: [String: Any]) -> (json: [String: Any]?, error: String?) {
        let (status, json) = request(.post, operation, body)
        guard status == 200 else { return (nil, (json["error"] as? [String: Any])?["message"] as? String ?? "HTTP \(status)") }
        return (json, nil)
    }

    func allUsers() -> [[String: Any]] {
        var users: [[String: Any]] = []
        var page = ""
        repeat {
            let (_, json) = request(.get, "accounts:batchGet", [:], query: [("maxResults", "1000"), ("nextPageToken", page)])
            users += json["users"] as? [[String: Any]] ?? []
            page = json["nextPageToken"] as? String ?? ""
        } while !page.isEmpty
        return users
    }
}

/// JSON text for the CLI (Foundation's writer; speed does not matter here).
enum JSONText {
    static func pretty(_ value: Any) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        else { return "{}" }
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
