import HearthProtocol
import Dispatch

/// The Firebase Auth endpoints on the database's port: the paths the ``IdentityService`` handles go to it.
///
/// Auth requests do not run on the event loop: a sign-in spends tens of milliseconds in argon2id, which
/// would stall every database client. They run on `authQueue` (concurrent; the service bounds its own
/// hashing) and the answer is handed back to the loop through the ``LoopExecutor``, the only thread that
/// may touch a responder.
extension DatabaseServer {
    static let authQueue = DispatchQueue(label: "hearth.auth", qos: .userInitiated, attributes: .concurrent)

    /// Auth's paths (rate limits count by address), and, behind trusted proxies, the console's sign-ins
    /// (whether a proxy vouches for HTTPS decides the cookie's `Secure`).
    public func needsPeerAddress(path: String) -> Bool {
        if identity?.handles(path: path) == true { return true }
        return !configuration.trustedProxies.isEmpty && (path == "/console/signin" || path == "/console/api/signin")
    }

    /// Waits for the auth requests under way to end (their answers go nowhere once the loop has
    /// stopped): before the identity service closes and the process exits.
    public func finishAuthRequests() { Self.authQueue.sync(flags: .barrier) {} }

    /// Answers an auth request (one whose path the identity service handles: the route table's "auth"
    /// route, or the console's forwarder) off the loop. `transform` (off the loop, with the answer) is for
    /// the console, which must not pass some fields on. False when no identity service handles the path.
    @discardableResult
    func answerAuth(
        _ request: HTTPRequest, responder: any HTTPResponder, transform: (@Sendable (HTTPResponse) -> HTTPResponse)? = nil
    ) -> Bool {
        guard let auth = identity, auth.handles(path: request.path) else { return false }
        let box = ResponderHandoff(responder)
        let answer: @Sendable () -> HTTPResponse = {
            let response = Self.httpResponse(auth.handle(request))
            return transform?(response) ?? response
        }
        guard let executor else {
            responder.respond(answer())
            return true
        }
        Self.authQueue.async {
            let response = answer()
            executor.execute { box.responder.respond(response) }
        }
        return true
    }

    /// An auth answer with the header every database response carries too.
    static func httpResponse(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.append(("x-content-type-options", "nosniff"))
        return response
    }
}
