import HearthCore
import HearthProtocol
import HearthSupport

/// The console (docs/console.md): its pages under `/console/`, its sign-in, and its API under
/// `/console/api/` (docs/console-api.md). `/` leads to it unless `--public` serves a site there.
extension Console {
    /// Whether `request` is the console's: `/` (leading to it) unless a site is served there, and its
    /// paths. Data under a top-level key `console` stays the database's: REST paths end in `.json`, and no
    /// console path does.
    func isConsoleRequest(_ request: HTTPRequest) -> Bool {
        let path = request.path
        if path == "/" { return server.site == nil && (request.method == .get || request.method == .head) }
        return (path == "/console" || path.hasPrefix("/console/")) && !path.hasSuffix(".json")
    }

    /// Answers a request ``isConsoleRequest(_:)`` took.
    func serveConsole(_ request: HTTPRequest, responder: any HTTPResponder) throws(RESTError) {
        let path = request.path
        if path == "/" || path == "/console" {
            responder.respond(Self.redirect(to: "/console/"))
        } else if path == "/console/signin" {
            responder.respond(signIn(code: request.queryItems.first { $0.name == "code" }?.value ?? "", secure: isSecure(request)))
        } else if path.hasPrefix("/console/api/") {
            try consoleAPI(request, endpoint: String(path.dropFirst("/console/api/".count)), responder: responder)
        } else {
            serveConsolePage(request, responder: responder)
        }
    }

    /// The link `hearth serve` prints when a person reads its output (a terminal): it signs the admin
    /// in once, within a day.
    func signInLink(base: String) -> String { base + Self.signInPath(sessions.signInCode) }

    static func signInPath(_ code: String) -> String { "/console/signin?code=" + code }

    /// `POST /console/api/signin-link` with the admin token (`hearth console link`): a fresh one-time
    /// sign-in path, `{"path": "/console/signin?code=…"}`, replacing the previous link. The server prints
    /// none of it: logs are read by more people than should be admins.
    func signInLink(_ request: HTTPRequest) throws(RESTError) -> HTTPResponse {
        guard let credential = DatabaseServer.credential(of: request, target: nil),
            case .success(let caller) = credentials.caller(credential: credential, authVariable: nil), caller.isAdmin
        else { throw RESTError(401, "Send the admin token (Authorization: Bearer …): it is in the data directory's admin-token file (owner in emulator mode).") }
        let code = sessions.issueSignInCode(now: clock())
        return RESTResponses.json(200, Array(Node(["path": Node(Self.signInPath(code))]).json().utf8))
    }

    // MARK: Signing in

    private func signIn(code: String, secure: Bool) -> HTTPResponse {
        guard let id = sessions.redeem(code: code, now: clock()) else {
            return Self.redirect(to: "/console/?signin=failed")
        }
        // The link is spent. The new code is not printed: logs are read by more people than should be
        // admins. Other browsers sign in with the admin token, or with a link from `hearth console link`.
        log("hearth: a browser signed in to the console with a sign-in link, which is now spent; for another browser, run 'hearth console link' or paste the admin token.")
        var response = Self.redirect(to: "/console/")
        response.headers.append(("set-cookie", ConsoleCookie.set(id, secure: secure)))
        return response
    }

    /// `POST /console/api/signin` with the admin token: for a browser without the printed link.
    func signIn(withToken request: HTTPRequest) throws(RESTError) -> HTTPResponse {
        guard let body = try? Node(jsonBytes: request.body), let token = body.child("token").stringValue,
            case .success(let caller) = credentials.caller(credential: token, authVariable: nil), caller.isAdmin
        else { throw RESTError(401, "That is not the admin token. It is in the data directory's admin-token file (owner in emulator mode).") }
        let id = sessions.open(now: clock())
        return RESTResponses.json(200, Array(#"{"ok":true}"#.utf8), headers: [("set-cookie", ConsoleCookie.set(id, secure: isSecure(request)))])
    }

    /// Whether the browser's request came over TLS (then the cookie is `Secure`): to this server, or to a
    /// trusted proxy that says so in `X-Forwarded-Proto` (docs/deploy.md).
    private func isSecure(_ request: HTTPRequest) -> Bool { configuration.secureCookies || configuration.trustedProxies.cameOverTLS(request) }

    // MARK: The session a request carries

    /// Why a request with the console's cookie is not an admin's.
    enum ConsoleRefusal: Error {
        case noSession
        case csrf
    }

    /// The console session behind `request`'s cookie, with its id. Every request but the one that
    /// fetches the token (`/console/api/session`) must carry the session's CSRF token in the
    /// `X-Hearth-CSRF` header (never in the URL, which proxies and browsers log): a page of another site
    /// can make a browser send the cookie (SameSite=Strict still sends it from another port of the same
    /// host) but cannot read the token to send with it.
    func consoleSession(of request: HTTPRequest, requireToken: Bool = true)
        -> Result<(id: String, session: ConsoleSessions.Session), ConsoleRefusal>
    {
        guard let id = ConsoleCookie.sessionID(in: request.headers["cookie"]),
            let session = sessions.session(id, now: clock())
        else { return .failure(.noSession) }
        guard requireToken else { return .success((id, session)) }
        guard let token = request.headers["x-hearth-csrf"], ConstantTime.equal(token, session.csrf) else { return .failure(.csrf) }
        return .success((id, session))
    }

    /// Ends the console feeds and cookie-opened streams of sessions that ended (signed out, idle,
    /// too old): from `tick`, and at once on sign-out.
    func endStreamsOfEndedSessions(now: Int64) {
        for namespace in namespaces.all {
            for feed in Array(namespace.consoleFeeds.values) where !sessions.isLive(feed.session, now: now) {
                feed.finish()
            }
            for stream in Array(namespace.streams.values) {
                if let session = stream.caller.consoleSession, !sessions.isLive(session, now: now) { stream.revokeAuth() }
            }
        }
    }

    static let csrfRefusal = RESTError(
        403, "The console's cookie needs its CSRF token (X-Hearth-CSRF) on every request: reload the console page.")
    static let noConsoleSession = RESTError(
        401, "Not signed in to the console: open the sign-in link hearth serve printed, or sign in with the admin token.")

    // MARK: Pages

    private func serveConsolePage(_ request: HTTPRequest, responder: any HTTPResponder) {
        guard request.method == .get || request.method == .head else {
            return responder.respond(RESTResponses.error(RESTError(405, "The console's pages are read with GET")))
        }
        guard let assets = assets else {
            return responder.respond(HTTPResponse(
                status: 500, headers: [("content-type", "text/plain; charset=utf-8"), ("cache-control", "no-cache")],
                body: Array(("The console's files were not found next to the hearth binary. Set HEARTH_CONSOLE_DIR to the "
                    + "directory Sources/HearthServer/Console/Assets of Hearth's source.\n").utf8)))
        }
        var page = request
        page.path = String(request.path.dropFirst("/console".count))
        assets.answer(page, executor: server.executor, responder: ConsoleHeadersResponder(responder))
    }

    static func redirect(to location: String) -> HTTPResponse {
        HTTPResponse(status: 303, headers: [("location", location), ("cache-control", "no-store")])
    }

    /// The console's pages may run only their own scripts, load only from this server, and never be
    /// framed (clickjacking).
    static let consolePageHeaders: [(String, String)] = [
        ("content-security-policy",
         "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"),
        ("x-frame-options", "DENY"),
        ("referrer-policy", "same-origin"),
    ]
}

/// Adds the console's security headers to the page a ``StaticSite`` answers with.
private final class ConsoleHeadersResponder: HTTPResponder {
    let wrapped: any HTTPResponder

    init(_ wrapped: any HTTPResponder) { self.wrapped = wrapped }

    func respond(_ response: HTTPResponse) {
        var response = response
        response.headers += Console.consolePageHeaders
        wrapped.respond(response)
    }

    func startStream(status: Int, headers: [(String, String)]) { wrapped.startStream(status: status, headers: headers) }
    func send(_ bytes: [UInt8]) -> Bool { wrapped.send(bytes) }
    func sendFinal(_ bytes: [UInt8]) { wrapped.sendFinal(bytes) }
    func finish() { wrapped.finish() }
    func abort() { wrapped.abort() }
    var onClose: (() -> Void)? {
        get { wrapped.onClose }
        set { wrapped.onClose = newValue }
    }
    var queuedByteCount: Int { wrapped.queuedByteCount }
}
