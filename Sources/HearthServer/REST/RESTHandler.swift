import Foundation
import HearthCore
import HearthProtocol
import HearthStorage

/// Firebase's REST API on one loaded namespace (docs/protocol.md §6): reads, SSE streams, and writes
/// through the ``WritePipeline``. The router has already found the namespace and the caller. Loop
/// thread only.
final class RESTHandler {
    /// A read waiting for a catch-up or its time bound, whichever comes first; loop thread only.
    /// A request that waits for this node to catch up with the others (a cluster): run once caught up,
    /// refused with a 503 when the catch-up failed or took too long, whichever comes first.
    private final class PendingRead {
        private var read: (() throws(RESTError) -> Void)?
        private let responder: any HTTPResponder

        init(_ read: @escaping () throws(RESTError) -> Void, _ responder: any HTTPResponder) {
            self.read = read
            self.responder = responder
        }

        func run(_ caughtUp: Result<Void, StorageError>) {
            guard let read else { return }
            self.read = nil
            switch caughtUp {
            case .success:
                do { try read() } catch { responder.respond(RESTResponses.error(error)) }
            case .failure(let error):
                responder.respond(RESTResponses.error(RESTError(
                    503, "This node could not confirm it has every write the other nodes acknowledged (\(error.message)), so it did not answer from what it has. Retry, or go through another node.")))
            }
        }

        static let timedOut = StorageError(.io, "PostgreSQL did not answer within \(ServerLimits.readCatchUpWaitMilliseconds) ms")
    }

    /// Runs `body` once this node holds every write the other nodes of a cluster acknowledged before now
    /// (at once on a single node), or answers a 503 (``PendingRead``).
    private func caughtUp(_ namespace: Namespace, responder: any HTTPResponder, _ body: @escaping () throws(RESTError) -> Void) throws(RESTError) {
        guard namespace.database.isFollowing, let executor = writes.executor else { return try body() }
        let pending = LoopBound(PendingRead(body, responder))
        namespace.database.catchUp { result in pending.value.run(result) }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(ServerLimits.readCatchUpWaitMilliseconds)) {
            executor.execute { pending.value.run(.failure(PendingRead.timedOut)) }
        }
    }

    private let writes: WritePipeline
    private let subscriberIDs: SubscriberIDs
    private let clock: () -> Int64
    private let metrics: ServerMetrics?
    private var pushIDs = PushIDGenerator()

    init(writes: WritePipeline, subscriberIDs: SubscriberIDs, clock: @escaping () -> Int64, metrics: ServerMetrics? = nil) {
        self.metrics = metrics
        self.writes = writes
        self.subscriberIDs = subscriberIDs
        self.clock = clock
    }

    func serve(
        _ request: HTTPRequest, method: HTTPRequest.Method, target: RESTTarget, caller: Caller, namespace: Namespace,
        responder: any HTTPResponder
    ) throws(RESTError) {
        switch method {
        case .get, .head:
            guard namespace.mayRead(caller, at: target.path, query: target.query, now: clock()) else {
                throw .permissionDenied
            }
            metrics?.countRead(.rest)
            let streaming = request.headers["accept"]?.contains("text/event-stream") == true
            let read: () throws(RESTError) -> Void = { [self] () throws(RESTError) in
                if streaming {
                    try stream(target: target, caller: caller, namespace: namespace, responder: responder)
                } else {
                    try get(request, target: target, namespace: namespace, responder: responder)
                }
            }
            // Other nodes write it too: the read waits until this node has what they acknowledged, and is
            // refused rather than answered from a tree that may lack some of it (PostgreSQL unreachable).
            try caughtUp(namespace, responder: responder, read)
        case .put:
            let value = try Self.body(request, at: target.path)
            try write(.set(target.path, value, ifHash: Self.etagCondition(request)), request, target, caller, namespace, responder)
        case .post:
            let id = pushIDs.next(now: clock())
            let path = target.path.appending(ChildKey(id))
            let value = try Self.body(request, at: path)
            try write(.set(path, value, ifHash: Self.etagCondition(request)), request, target, caller, namespace, responder) { _ in
                Array("{\"name\":\(Node(id).json())}".utf8)
            }
        case .patch:
            guard !request.body.isEmpty else { throw RESTError(400, "Request body is missing: send a JSON object") }
            let values: [(Path, Node)]
            do { values = try WriteBody.update(request.body, at: target.path) } catch { throw RESTError(error) }
            if try Self.etagCondition(request) != nil {
                throw RESTError(400, "if-match is supported on PUT, POST and DELETE, not on multi-path PATCH")
            }
            let keys = values.map(\.0)
            try write(.update(target.path, values), request, target, caller, namespace, responder) { root in
                var data: [UInt8] = [UInt8(ascii: "{")]
                for (index, key) in keys.enumerated() {
                    if index > 0 { data.append(UInt8(ascii: ",")) }
                    Node(key.description).appendJSON(to: &data)
                    data.append(UInt8(ascii: ":"))
                    root.child(at: target.path.appending(path: key)).appendJSON(to: &data, format: RESTResponses.format(target))
                }
                data.append(UInt8(ascii: "}"))
                return data
            }
        case .delete:
            try write(.set(target.path, .empty, ifHash: Self.etagCondition(request)), request, target, caller, namespace, responder)
        case .options:
            responder.respond(RESTResponses.preflight(request))
        }
    }

    static func body(_ request: HTTPRequest, at path: Path) throws(RESTError) -> Node {
        guard !request.body.isEmpty else { throw RESTError(400, "Request body is missing: send JSON data") }
        do { return try WriteBody.value(request.body, at: path) } catch { throw RESTError(error) }
    }

    /// `if-match` as the tree's `ifHash` (`null_etag` = absent = the empty hash). Hearth's tags are bare
    /// base64 hashes, and one in 4,096 begins with `W/` itself: only `W/"…"` is a weak tag's prefix.
    static func etagCondition(_ request: HTTPRequest) throws(RESTError) -> String? {
        guard var tag = request.headers["if-match"]?.trimmingCharacters(in: .whitespaces) else { return nil }
        if tag.hasPrefix("W/\"") { tag.removeFirst(2) }
        if tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") { tag = String(tag.dropFirst().dropLast()) }
        return tag == "null_etag" ? "" : tag
    }

    // MARK: Writes

    /// Sends `operation` down the pipeline and answers with the written value (or what `reply` makes of
    /// the tree after it), or a 412 with the current value when its `if-match` is stale.
    private func write(
        _ operation: WriteOperation, _ request: HTTPRequest, _ target: RESTTarget, _ caller: Caller, _ namespace: Namespace,
        _ responder: any HTTPResponder, reply: ((Node) -> [UInt8])? = nil
    ) throws(RESTError) {
        // A compare-and-set decides on the latest value: in a cluster, after catching up with the others
        // (a plain write needs no such wait: PostgreSQL's commit order decides it).
        if case .set(_, _, .some) = operation {
            return try caughtUp(namespace, responder: responder) { [self] () throws(RESTError) in
                submit(operation, request, target, caller, namespace, responder, reply: reply)
            }
        }
        submit(operation, request, target, caller, namespace, responder, reply: reply)
    }

    private func submit(
        _ operation: WriteOperation, _ request: HTTPRequest, _ target: RESTTarget, _ caller: Caller, _ namespace: Namespace,
        _ responder: any HTTPResponder, reply: ((Node) -> [UInt8])?
    ) {
        let wantsETag = RESTResponses.wantsETag(request)
        let path = operation.path
        let clock = clock
        writes.submit(operation, by: caller, in: namespace, from: .rest) { outcome in
            switch outcome {
            case .success(let root):
                Self.answerWrite(root, path: path, target: target, wantsETag: wantsETag, responder: responder, reply: reply)
            case .failure(.stale):
                // 412 with the current value and its ETag (§6.5), durable and including whatever made the
                // condition fail; the value is a read, so only for callers the rules let read it.
                guard namespace.mayRead(caller, at: path, query: nil, now: clock()) else {
                    return responder.respond(RESTResponses.error(RESTError.permissionDenied))
                }
                let value = namespace.database.read { $0.value(at: path) }
                var body: [UInt8] = []
                value.appendJSON(to: &body, format: RESTResponses.format(target))
                responder.respond(RESTResponses.json(412, body, headers: [("etag", RESTResponses.etag(of: value))]))
            case .failure(let failure):
                responder.respond(RESTResponses.error(failure))
            }
        }
    }

    private static func answerWrite(
        _ root: Node, path: Path, target: RESTTarget, wantsETag: Bool, responder: any HTTPResponder,
        reply: ((Node) -> [UInt8])?
    ) {
        var headers: [(String, String)] = []
        if wantsETag { headers.append(("etag", RESTResponses.etag(of: root.child(at: path)))) }
        if target.print == .silent {
            responder.respond(RESTResponses.withCommonHeaders(HTTPResponse(status: 204, headers: headers)))
            return
        }
        var body: [UInt8]
        if let reply {
            body = reply(root)
        } else {
            body = []
            root.child(at: path).appendJSON(to: &body, format: RESTResponses.format(target))
        }
        responder.respond(RESTResponses.json(200, body, headers: headers))
    }

    // MARK: Reads

    private func get(_ request: HTTPRequest, target: RESTTarget, namespace: Namespace, responder: any HTTPResponder)
        throws(RESTError)
    {
        if RESTResponses.wantsETag(request) && (target.shallow || target.query != nil) {
            throw RESTError(400, "ETags cannot be combined with shallow or query parameters")
        }
        if let query = target.query { namespace.prepareIndex(for: query, at: target.path) }
        let value: Node = namespace.database.read { tree in
            if let query = target.query {
                let entries = tree.window(at: target.path, params: query)
                if entries.isEmpty { return tree.value(at: target.path).hasChildren ? Node(children: ChildrenMap()) : .empty }
                var children = entries.map { (key: $0.key, value: $0.node) }
                children.sort { $0.key < $1.key }
                return Node(children: ChildrenMap(sortedUniqueElements: children))
            }
            return tree.value(at: target.path)
        }
        var headers: [(String, String)] = []
        if RESTResponses.wantsETag(request) {
            let tag = RESTResponses.etag(of: value)
            headers.append(("etag", tag))
            if let expected = request.headers["if-none-match"], expected == tag {
                responder.respond(RESTResponses.withCommonHeaders(HTTPResponse(status: 304, headers: headers)))
                return
            }
        }
        if target.print == .silent {
            responder.respond(RESTResponses.withCommonHeaders(HTTPResponse(status: 204, headers: headers)))
            return
        }
        var body: [UInt8] = []
        let format = RESTResponses.format(target)
        if target.shallow {
            Self.shallow(value).appendJSON(to: &body, format: format)
        } else if value.isEmpty && target.query != nil && namespace.database.read({ $0.value(at: target.path).hasChildren }) {
            body = Array("{}".utf8)
        } else {
            value.appendJSON(to: &body, format: format)
        }
        var contentType = "application/json; charset=utf-8"
        if let callback = target.callback {
            guard callback.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "$" }) else {
                throw RESTError(400, "callback must be a JavaScript function name")
            }
            body = Array("\(callback)(".utf8) + body + Array(");".utf8)
            contentType = "application/javascript; charset=utf-8"
        }
        if let download = target.download {
            let safe = download.filter { $0 != "\"" && $0 != "\r" && $0 != "\n" }
            headers.append(("content-disposition", "attachment; filename=\"\(safe)\""))
        }
        headers.insert(("content-type", contentType), at: 0)
        responder.respond(RESTResponses.withCommonHeaders(HTTPResponse(status: 200, headers: headers, body: body)))
    }

    /// `shallow=true`: the children's keys, each with `true` for an object and its own value for a
    /// primitive (`{"a": {"deep": 1}, "b": 2}` reads `{"a": true, "b": 2}`), as Firebase answers.
    static func shallow(_ value: Node) -> Node {
        guard value.hasChildren else { return value }
        var children: [(key: ChildKey, value: Node)] = []
        value.children.forEach { key, child in
            children.append((key, child.hasChildren ? Node(true) : child))
            return true
        }
        return Node(children: ChildrenMap(sortedUniqueElements: children))
    }

    // MARK: Streams (§6.7)

    private func stream(target: RESTTarget, caller: Caller, namespace: Namespace, responder: any HTTPResponder) throws(RESTError) {
        if target.shallow { throw RESTError(400, "shallow cannot be combined with streaming") }
        let params = target.query.flatMap { $0.loadsAllData ? nil : $0 }
        if let params { namespace.prepareIndex(for: params, at: target.path) }
        var value = namespace.database.read { $0.value(at: target.path) }
        if let params { value = QueryWindow.node(of: value, params: params) }
        let stream = EventStream(
            id: subscriberIDs.next(), path: target.path, exportFormat: target.exportFormat, caller: caller, params: params,
            initialWindow: params == nil ? .empty : value, responder: responder, namespace: namespace)
        namespace.addStream(stream)
        responder.onClose = { [weak namespace, weak stream] in
            if let stream { namespace?.removeStream(stream) }
        }
        responder.startStream(
            status: 200, headers: RESTResponses.commonHeaders + [("content-type", "text/event-stream; charset=utf-8")])
        let initial = SSE.event("put", path: .root, data: value, format: target.exportFormat ? .export : .rest)
        if !responder.send(initial) { stream.disconnectSlowReader() }
    }
}

/// Ids for streams and realtime sessions, unique across both: they name subscribers in a ``FanOut``.
final class SubscriberIDs {
    private var last: UInt64 = 0

    func next() -> UInt64 {
        last += 1
        return last
    }
}
