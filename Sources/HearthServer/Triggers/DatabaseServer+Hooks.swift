import Dispatch
import HearthCore
import HearthProtocol
public import HearthStorage
public import HearthTriggers

/// The server's side of webhooks and functions processes: `/.settings/hooks…` and `/.settings/functions…` for admins, answered by the ``HookService`` off the
/// loop, and the feed and commit wake-ups the service follows (``TriggerHost``).
extension DatabaseServer: TriggerHost {
    static let hooksQueue = DispatchQueue(label: "hearth.hooks.admin", qos: .userInitiated)

    /// Answers `/.settings/hooks…` and `/.settings/functions…` of `namespace` (admins only, checked before) on the hooks service.
    func serveHooks(_ request: HTTPRequest, method: HTTPRequest.Method, target: RESTTarget, namespace: String, responder: any HTTPResponder) throws(RESTError) {
        guard let hooks else {
            throw RESTError(
                501,
                "Webhooks and functions are not available on this server: it was started without a hooks service.")
        }
        var parameters: [String: String] = [:]
        for (name, value) in request.queryItems where name == "hook" || name == "limit" || name == "id" { parameters[name] = value }
        let hookRequest = HookRequest(
            method: method, namespace: namespace, endpoint: target.path.keys.dropFirst().map(\.string).joined(separator: "/"),
            parameters: parameters, body: request.body)
        let box = ResponderHandoff(responder)
        guard let executor else { return responder.respond(hooks.answer(hookRequest)) }
        Self.hooksQueue.async {
            let response = hooks.answer(hookRequest)
            executor.execute { box.responder.respond(response) }
        }
    }

    public func watch(
        namespace name: String, patterns: TriggerPatterns, woken: @escaping @Sendable () -> Void,
        ready: @escaping @Sendable (Result<Int64, StorageError>) -> Void
    ) {
        guard let executor else { return ready(.failure(StorageError(.closed, "the server is not running"))) }
        executor.execute { [weak self] in self?.install(patterns, woken: woken, in: name, ready: ready) }
    }

    /// On the loop: sets the namespace's patterns and wake-up, then answers the feed's head once the writes
    /// taken before are committed (they may lack the earlier values the patterns need; a new hook starts after them).
    private func install(
        _ patterns: TriggerPatterns, woken: @escaping @Sendable () -> Void, in name: String, ready: @escaping @Sendable (Result<Int64, StorageError>) -> Void
    ) {
        namespaces.withNamespace(name) { (result: Result<Namespace, NamespaceUnavailable>) -> Void in
            guard case .success(let namespace) = result else {
                ready(.failure(StorageError(.unsupported, "namespace '\(name)' cannot be opened")))
                return
            }
            namespace.triggerPatterns = patterns
            if patterns.isEmpty { namespace.committed = nil } else { namespace.committed = { woken() } }
            Self.readHead(of: namespace.database, ready)
        }
    }

    private static func readHead(of database: DurableDatabase, _ ready: @escaping @Sendable (Result<Int64, StorageError>) -> Void) {
        database.afterWritesInFlight {
            database.engine.readFeed(after: Int64.max, limit: 0, completion: { page in answerHead(page, ready) })
        }
    }

    private static func answerHead(_ page: Result<ChangeFeedPage, StorageError>, _ ready: @Sendable (Result<Int64, StorageError>) -> Void) {
        switch page {
        case .success(let page):
            guard let head = page.head else { return ready(.failure(StorageError(.unsupported, "this storage engine does not say where its feed ends"))) }
            ready(.success(head))
        case .failure(let error): ready(.failure(error))
        }
    }

    public func readFeed(
        namespace name: String, after position: Int64, limit: Int, completion: @escaping @Sendable (Result<ChangeFeedPage, StorageError>) -> Void
    ) {
        guard let executor else { return completion(.failure(StorageError(.closed, "the server is not running"))) }
        executor.execute { [weak self] in
            guard let self else { return }
            namespaces.withNamespace(name) { result in
                switch result {
                case .success(let namespace): namespace.database.engine.readFeed(after: position, limit: limit, completion: completion)
                case .failure(let unavailable): completion(.failure(StorageError(.unsupported, unavailable.message)))
                }
            }
        }
    }
}
