import Foundation
import HearthProtocol
import Testing

@testable import HearthServer

/// An identity service that handles Auth's paths and nothing else (what the route table asks of it).
private final class PathOnlyIdentity: IdentityService {
    func verifyIDToken(_ token: String) -> Result<VerifiedIdentity, IdentityRefusal> { .failure(.invalid) }
    func accountAllows(uid: String, issuedAt: Int64) -> Bool { false }
    func handles(path: String) -> Bool { path.hasPrefix("/identitytoolkit.googleapis.com/") }
    func handle(_ request: HTTPRequest) -> HTTPResponse { HTTPResponse(status: 200, headers: [], body: []) }
}

private func request(_ method: HTTPRequest.Method, _ path: String) -> HTTPRequest {
    HTTPRequest(method: method, path: path, queryItems: [], headers: [:], body: [])
}

/// Which route answers which request, in the table's order: the console and auth before the database, the
/// database last, taking everything else (a path under `console` ending in `.json` is data).
@Test func theRouteTableSendsEachRequestToItsOwner() throws {
    let withoutAuth = makeServer()
    #expect(withoutAuth.routes.route(for: request(.post, "/identitytoolkit.googleapis.com/v1/accounts:signUp"))?.name == "database")
    var server = makeServer(identity: PathOnlyIdentity())
    #expect(server.routes.names == ["auth", "console", "preflight", "long-poll", "metrics", "hosting", "database"])
    func owner(_ method: HTTPRequest.Method, _ path: String) -> String? { server.routes.route(for: request(method, path))?.name }

    #expect(owner(.post, "/identitytoolkit.googleapis.com/v1/accounts:signUp") == "auth")
    #expect(owner(.options, "/identitytoolkit.googleapis.com/v1/accounts:signUp") == "auth")
    #expect(owner(.get, "/") == "console")
    #expect(owner(.post, "/") == "database")
    #expect(owner(.get, "/console") == "console")
    #expect(owner(.get, "/console/api/usage") == "console")
    #expect(owner(.get, "/console/settings.json") == "database")
    #expect(owner(.options, "/users.json") == "preflight")
    #expect(owner(.get, "/.lp") == "long-poll")
    #expect(owner(.get, "/metrics") == "metrics")
    #expect(owner(.get, "/index.html") == "database")
    #expect(owner(.get, "/users/ada.json") == "database")

    // With a site (`--public`), `/` and its files are the site's; the console keeps its own paths.
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-routes-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try Data("<h1>hi</h1>".utf8).write(to: URL(fileURLWithPath: directory + "/index.html"))
    server = makeServer(identity: PathOnlyIdentity(), site: StaticSite(directory: directory))
    #expect(owner(.get, "/") == "hosting")
    #expect(owner(.get, "/index.html") == "hosting")
    #expect(owner(.get, "/console/") == "console")
    #expect(owner(.get, "/users/ada.json") == "database")
}
