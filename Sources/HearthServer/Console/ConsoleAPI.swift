import Foundation
import HearthCore
import HearthProtocol
import HearthStorage
import HearthSupport

/// `/console/api/…` (docs/console-api.md): the calls the console's pages make besides the database's
/// own REST API. All for a console session only; changes need its CSRF token.
extension Console {
    func consoleAPI(_ request: HTTPRequest, endpoint: String, responder: any HTTPResponder) throws(RESTError) {
        if endpoint == "signin" {
            guard request.method == .post else { throw RESTError(405, "Sign in with POST") }
            return responder.respond(try signIn(withToken: request))
        }
        if endpoint == "signin-link" {
            guard request.method == .post else { throw RESTError(405, "Ask for a sign-in link with POST") }
            return responder.respond(try signInLink(request))
        }
        let session: ConsoleSessions.Session
        let sessionID: String
        // The token itself is fetched with the cookie alone (another site's page cannot read the answer:
        // no CORS grant).
        switch consoleSession(of: request, requireToken: endpoint != "session") {
        case .success(let found): (sessionID, session) = found
        case .failure(.noSession): throw Self.noConsoleSession
        case .failure(.csrf): throw Self.csrfRefusal
        }
        let method = request.method
        switch endpoint {
        case "session":
            let body = Node([
                "csrf": Node(session.csrf), "project": Node(configuration.project),
                "authProject": Node(configuration.project), "defaultNamespace": Node(configuration.defaultNamespace),
                "emulator": Node(configuration.emulator), "version": Node(HearthVersion.string),
                "auth": Node(identity != nil),
            ])
            responder.respond(RESTResponses.json(200, Array(body.json().utf8)))
        case "signout":
            guard method == .post else { throw RESTError(405, "Sign out with POST") }
            sessions.close(sessionID)
            endStreamsOfEndedSessions(now: clock())
            responder.respond(RESTResponses.json(200, Array(#"{"ok":true}"#.utf8), headers: [("set-cookie", ConsoleCookie.clear)]))
        case "children":
            let ns = try consoleNamespaceName(request)
            let path = Path(Self.parameter("path", of: request) ?? "/")
            let after = Self.parameter("after", of: request)
            let limit = Self.parameter("limit", of: request).flatMap { Int($0) }
            withConsoleNamespace(ns, responder: responder) { namespace in
                let page = ConsoleTreePage(root: namespace.database.root, path: path, after: after, limit: limit)
                responder.respond(RESTResponses.json(200, Array(page.json().utf8)))
            }
        case "changes":
            let ns = try consoleNamespaceName(request)
            withConsoleNamespace(ns, responder: responder) { [subscriberIDs = server.subscriberIDs] namespace in
                let feed = ConsoleFeed(id: subscriberIDs.next(), session: sessionID, responder: responder, namespace: namespace)
                responder.startStream(status: 200, headers: [
                    ("content-type", "text/event-stream"), ("cache-control", "no-cache"), ("x-content-type-options", "nosniff"),
                ])
                namespace.consoleFeeds[feed.id] = feed
                responder.onClose = { [weak namespace] in namespace?.consoleFeeds[feed.id] = nil }
            }
        case "usage":
            responder.respond(RESTResponses.json(200, Array(usageJSON(request).utf8)))
        case "backups":
            guard method == .get else { throw RESTError(405, "Backups are listed with GET") }
            listBackups(responder: responder)
        case "namespaces":
            switch method {
            case .get: responder.respond(RESTResponses.json(200, Array(namespacesJSON().utf8)))
            case .post: try createNamespace(request, responder: responder)
            default: throw RESTError(405, "List namespaces with GET, create one with POST")
            }
        case _ where endpoint.hasPrefix("namespaces/"):
            guard method == .delete else { throw RESTError(405, "Delete a namespace with DELETE") }
            let raw = String(endpoint.dropFirst("namespaces/".count))
            let name = raw.removingPercentEncoding ?? raw
            try deleteNamespace(name, request: request, responder: responder)
        case _ where endpoint.hasPrefix("rules"):
            try consoleRules(request, endpoint: endpoint, responder: responder)
        case _ where endpoint.hasPrefix("auth/"):
            try forwardToAuth(request, path: "/" + endpoint.dropFirst("auth/".count), responder: responder)
        default:
            throw RESTError(404, "No console API \(endpoint.prefix(100))")
        }
    }

    /// The first query parameter called `name`.
    static func parameter(_ name: String, of request: HTTPRequest) -> String? {
        request.queryItems.first { $0.name == name }?.value
    }

    /// `?ns=`, else the default namespace.
    func consoleNamespaceName(_ request: HTTPRequest) throws(RESTError) -> String {
        let name = Self.parameter("ns", of: request) ?? configuration.defaultNamespace
        guard NamespaceName.isValid(name) else { throw RESTError(400, NamespaceName.invalidMessage(name)) }
        return name
    }

    /// Runs `body` with a namespace that exists, or the default one (the console creates no other by
    /// looking at it).
    func withConsoleNamespace(_ name: String, responder: any HTTPResponder, _ body: @escaping (Namespace) throws(RESTError) -> Void) {
        guard name == configuration.defaultNamespace || namespaces.mayOpen(name, isAdmin: false) else {
            return responder.respond(RESTResponses.error(RESTError(404, "There is no namespace '\(name)'. Create it on the Namespaces page.")))
        }
        server.withNamespace(name, responder: responder, body)
    }

    // MARK: Usage

    /// Once a second from `tick`: the running totals the usage charts are drawn from.
    func recordUsage(now: Int64) {
        var connections = server.longPolls.count
        for namespace in namespaces.all { connections += namespace.listeners.realtimeSessionCount + namespace.streams.count }
        // Long-poll sessions are realtime sessions too: counted once.
        connections -= min(server.longPolls.count, connections)
        usage.record(UsageHistory.Totals(
            t: now, connections: connections, reads: metrics.reads.values.reduce(0, &+),
            writes: metrics.writes.values.reduce(0, &+), bytes: metrics.deliveredBytes))
    }

    private func usageJSON(_ request: HTTPRequest) -> String {
        let range = Self.parameter("range", of: request).flatMap { UsageHistory.Range(rawValue: $0) } ?? .minute
        let points = usage.points(range).map { point in
            "{\"t\":\(point.t),\"seconds\":\(Node(point.seconds).json()),\"connections\":\(point.connections),\"reads\":\(Node(point.reads).json()),"
                + "\"writes\":\(Node(point.writes).json()),\"bytes\":\(Node(point.bytes).json())}"
        }
        let storage = namespaces.knownNames.map { "{\"namespace\":\(Node($0).json()),\"bytes\":\(namespaces.storedBytes($0))}" }
        var listeners = 0
        var connections = 0
        for namespace in namespaces.all {
            listeners += namespace.listeners.subscriptionCount
            connections += namespace.listeners.realtimeSessionCount + namespace.streams.count
        }
        let uptime = max(0, clock() - metrics.startedAt) / 1000
        return "{\"range\":\"\(range.rawValue)\",\"stepSeconds\":\(range.stepMilliseconds / 1000),\"points\":[\(points.joined(separator: ","))],"
            + "\"storage\":[\(storage.joined(separator: ","))],"
            + "\"now\":{\"connections\":\(connections),\"listeners\":\(listeners),\"uptimeSeconds\":\(uptime)}}"
    }

    // MARK: Backups

    /// `{"directory":…,"backups":[{"namespace","name","time","bytes","position","catchUpEntries"}]}`, newest
    /// first, read off the loop; `{"directory":null,"backups":[]}` when the server makes none.
    private func listBackups(responder: any HTTPResponder) {
        guard let backups = server.backups, let executor = server.executor else {
            return responder.respond(RESTResponses.json(200, Array(#"{"directory":null,"backups":[]}"#.utf8)))
        }
        let pending = LoopBound(responder)
        DispatchQueue.global().async {
            let rows = backups.list().sorted { $0.manifest.time > $1.manifest.time }.map { listed in
                let manifest = listed.manifest
                return "{\"namespace\":\(Node(manifest.namespace).json()),\"name\":\(Node(listed.name).json()),\"time\":\(manifest.time),"
                    + "\"bytes\":\(manifest.bytes),\"position\":\(manifest.position),\"catchUpEntries\":\(manifest.catchUpEntries)}"
            }
            let body = Array("{\"directory\":\(Node(backups.directory).json()),\"backups\":[\(rows.joined(separator: ","))]}".utf8)
            executor.execute { pending.value.respond(RESTResponses.json(200, body)) }
        }
    }

    // MARK: Namespaces

    private func namespacesJSON() -> String {
        let rows = namespaces.knownNames.union(configuration.defaultNamespace).map { name in
            let open = namespaces[name]
            let connections = open.map { $0.listeners.realtimeSessionCount + $0.streams.count } ?? 0
            return "{\"name\":\(Node(name).json()),\"bytes\":\(namespaces.storedBytes(name)),\"loaded\":\(open != nil),"
                + "\"connections\":\(connections),\"default\":\(name == configuration.defaultNamespace)}"
        }
        return "{\"namespaces\":[\(rows.joined(separator: ","))]}"
    }

    /// Creates a namespace by opening it (off the loop when it opens over the network), answered once
    /// it is open.
    private func createNamespace(_ request: HTTPRequest, responder: any HTTPResponder) throws(RESTError) {
        guard let body = try? Node(jsonBytes: request.body), let name = body.child("name").stringValue else {
            throw RESTError(400, "Send {\"name\": \"…\"}")
        }
        guard NamespaceName.isValid(name) else { throw RESTError(400, NamespaceName.invalidMessage(name)) }
        guard !namespaces.exists(name) else { throw RESTError(409, "There is already a namespace '\(name)'.") }
        server.withNamespace(name, responder: responder) { [log] _ in
            log("hearth: namespace '\(name)' created from the console.")
            responder.respond(RESTResponses.json(201, Array("{\"name\":\(Node(name).json())}".utf8)))
        }
    }

    /// Deletes a namespace, answered once its stored data is gone (that happens off the loop).
    private func deleteNamespace(_ name: String, request: HTTPRequest, responder: any HTTPResponder) throws(RESTError) {
        guard NamespaceName.isValid(name) else { throw RESTError(400, NamespaceName.invalidMessage(name)) }
        guard let body = try? Node(jsonBytes: request.body), body.child("confirm").stringValue == name else {
            throw RESTError(400, "Confirm by sending {\"confirm\": \"\(name)\"}: deleting a namespace deletes its data.")
        }
        guard namespaces.exists(name) else { throw RESTError(404, "There is no namespace '\(name)'.") }
        guard !namespaces.isLoading(name) else { throw RESTError(409, "'\(name)' is still loading; delete it once it has loaded.") }
        guard !namespaces.isDeleting(name) else { throw RESTError(409, "'\(name)' is already being deleted.") }
        namespaces.delete(name) { result in
            switch result {
            case .success: responder.respond(RESTResponses.json(200, Array("{\"deleted\":\(Node(name).json())}".utf8)))
            case .failure(let error): responder.respond(RESTResponses.error(RESTError(error)))
            }
        }
    }

    // MARK: Auth

    /// Sends an auth request on as the admin (the console's session stands for the admin credential).
    private func forwardToAuth(_ request: HTTPRequest, path: String, responder: any HTTPResponder) throws(RESTError) {
        guard let identity, identity.handles(path: path) else { throw RESTError(404, "This server does not serve Firebase Auth at \(path.prefix(100))") }
        // Firebase Auth reads only JSON bodies: any other body would be taken for none (an account
        // created with no email, say), so it is refused rather than ignored.
        let contentType = request.headers["content-type"]?.split(separator: ";").first?.lowercased()
        guard request.body.isEmpty || contentType == "application/json" else {
            throw RESTError(415, "Send the body as JSON, with the header Content-Type: application/json.")
        }
        var forwarded = request
        forwarded.path = path
        forwarded.headers["cookie"] = nil
        forwarded.headers["x-hearth-csrf"] = nil
        forwarded.headers["authorization"] = "Bearer " + (configuration.adminToken ?? "owner")
        _ = server.answerAuth(forwarded, responder: responder, transform: ConsoleSecrets.mayCarrySecrets(path) ? ConsoleSecrets.hidden : nil)
    }
}

extension Array where Element == String {
    /// The names with `name` added when missing, sorted.
    func union(_ name: String) -> [String] { contains(name) ? self : (self + [name]).sorted() }
}
