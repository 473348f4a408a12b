import Foundation
import HearthAuth
import HearthAuthSQLite
import HearthProtocol

/// Firebase Auth's REST API bodies: JSON or form-encoded, keys converted from snake_case, numbers and
/// strings coerced, through the service's own routing (a login-free endpoint of each kind). Endpoints
/// that hash passwords are left out: argon2id would make every input take tens of milliseconds.
///
/// Input: the first line is `json` or `form`, then the body.
enum AuthFuzzing {
    static let target = FuzzTarget(name: "auth", input: "'json' or 'form', a newline, then a request body", run: run)

    /// One service for the whole run, on a throwaway directory (opening one costs a key pair).
    static let service: AuthService? = {
        let directory = NSTemporaryDirectory() + "hearth-fuzz-auth-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var configuration = AuthConfiguration(projectID: "demo-fuzz", emulator: true, adminToken: nil)
        configuration.authorizedDomains = ["example.com"]
        return try? AuthService.open(dataDirectory: directory, configuration: configuration)
    }()

    static let paths = [
        "/identitytoolkit.googleapis.com/v1/accounts:lookup",
        "/identitytoolkit.googleapis.com/v1/accounts:sendOobCode",
        "/securetoken.googleapis.com/v1/token",
        "/emulator/action",
    ]

    static func run(_ bytes: [UInt8]) {
        guard let service else { return }
        let (kind, body) = bytes.splitOnce(at: 10)
        let form = Array(kind) == Array("form".utf8)
        let contentType = form ? "application/x-www-form-urlencoded" : "application/json"
        for path in paths {
            let request = HTTPRequest(
                method: .post, path: path, queryItems: [("key", "fuzz")], headers: ["content-type": contentType],
                body: Array(body))
            let response = service.handle(request)
            fuzzCheck((200...599).contains(response.status), "status \(response.status) for \(path)")
        }
    }
}
