import Foundation
import HearthCore
import HearthProtocol
import HearthServer
import HearthStorage
import HearthSupport
import HearthTriggers

/// The server's side of functions processes (HearthFunctions, docs/functions.md): an admin endpoint per
/// process under `/.settings/functions/NAME…`. The process reads the feed itself; the server keeps its
/// patterns (so that writes keep the earlier values its functions need, even while it is away), its
/// cursor, and the events it parked.
///
///     PUT    functions/NAME          {"paths": ["/jokes/{jokeId}", …]}  → {"after": P, "authAfter": Q|null}  (registers; where to read from)
///     PUT    functions/NAME/cursor   {"after": P, "authAfter": Q}       → every entry through P (auth event through Q) is handled
///     POST   functions/NAME/parked   {"function", "id", "position", "attempts", "error", "event"}
///     GET    functions/NAME/parked, DELETE functions/NAME/parked[?id=ID]
///     GET    functions               → each process: paths, cursor, when last seen, parked count; the feed's head
///     DELETE functions/NAME          → forgets the process
extension HookDeliveryService {
    /// Most patterns one functions process may register.
    static let functionPatternsMax = 200

    func answerFunctions(_ request: HookRequest) throws -> HTTPResponse {
        let parts = request.endpoint.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if parts.count == 1 {
            guard request.method == .get else { return Self.error(405, "\(request.method.rawValue) is not allowed on /.settings/functions.json") }
            return Self.json(200, try statusJSON(of: request.namespace))
        }
        let name = parts[1]
        guard Self.isConsumerName(name) else {
            return Self.error(400, "\"\(name.prefix(80))\" is not a functions process name: 1 to 64 letters, digits, '-' or '_'")
        }
        switch (parts.count > 2 ? parts[2] : "", request.method) {
        case ("", .put): return try register(name, request)
        case ("", .delete):
            guard try consumers.remove(request.namespace, name) else { return Self.error(404, "no functions process \"\(name)\" in \(request.namespace)") }
            return queue.sync { reactivate(request.namespace) }
        case ("cursor", .put): return try saveCursor(name, request)
        case ("parked", .post): return try park(name, request)
        case ("parked", .get): return Self.json(200, try parkedJSON(name, request.namespace))
        case ("parked", .delete):
            let removed = try consumers.dismiss(request.namespace, name, eventId: request.parameters["id"])
            return Self.json(200, "{\"removed\":\(removed)}")
        case ("", _), ("cursor", _), ("parked", _):
            return Self.error(405, "\(request.method.rawValue) is not allowed on /.settings/\(request.endpoint).json")
        default:
            return Self.error(404, "Not found: a functions process's endpoints are functions/NAME, functions/NAME/cursor and functions/NAME/parked")
        }
    }

    private static func isConsumerName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.unicodeScalars.allSatisfy { $0 == "-" || $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
    }

    /// Registers the process's patterns and answers where it reads from: its saved cursor, or, the first
    /// time, the feed's head once the namespace keeps what the patterns need.
    private func register(_ name: String, _ request: HookRequest) throws -> HTTPResponse {
        guard let body = try? Node(jsonBytes: request.body), body.child("paths").hasChildren || body.child("auth").boolValue == true else {
            return Self.error(400, #"register a functions process with {"paths": ["/jokes/{jokeId}", …]}: the patterns of its functions (and "auth": true for user functions)"#)
        }
        var patterns: [TriggerPattern] = []
        for (_, child) in body.child("paths").children {
            guard let text = child.stringValue else { return Self.error(400, "each of \"paths\" is a pattern string such as \"/jokes/{jokeId}\"") }
            do { patterns.append(try TriggerPattern(text)) } catch { return Self.error(400, error.message) }
        }
        guard patterns.count <= Self.functionPatternsMax else {
            return Self.error(400, "a functions process watches at most \(Self.functionPatternsMax) patterns, not \(patterns.count)")
        }
        return try queue.sync {
            let now = settings.clock()
            let known = try consumers.consumer(request.namespace, name)
            let document = (try? store.document(request.namespace)) ?? HooksDocument()
            // The namespace keeps what the patterns need first, and the feed's head is read after that;
            // only then is the process stored, already at that head: anyone who sees it registered (on any
            // node of a cluster) and writes gets those writes handed to it.
            switch activate(document, in: request.namespace, adding: patterns) {
            case .success(let head):
                try consumers.register(FunctionConsumer(namespace: request.namespace, name: name, patterns: patterns, after: known?.after ?? head, seenAt: now))
                let authAfter = known?.authAfter.map(String.init) ?? "null"
                return Self.json(200, "{\"after\":\(known?.after ?? head),\"head\":\(head),\"authAfter\":\(known == nil ? "null" : authAfter)}")
            case .failure(let error):
                return Self.error(503, "the functions process could not be registered: \(error.message)")
            }
        }
    }

    /// After a process is forgotten: the namespace stops keeping what only its patterns needed.
    private func reactivate(_ namespace: String) -> HTTPResponse {
        let document = (try? store.document(namespace)) ?? HooksDocument()
        switch activate(document, in: namespace) {
        case .success: return Self.json(200, #"{"status":"ok"}"#)
        case .failure(let error): return Self.error(503, "the functions process was removed, but the namespace did not answer: \(error.message)")
        }
    }

    private func saveCursor(_ name: String, _ request: HookRequest) throws -> HTTPResponse {
        func position(_ key: String) -> Int64?? {
            guard let body = try? Node(jsonBytes: request.body) else { return .some(nil) }
            let value = body.child(ChildKey(key))
            if value.isEmpty { return .none }
            guard case .integer(let number)? = value.leafValue, number >= 0 else { return .some(nil) }
            return .some(number)
        }
        let after = position("after"), authAfter = position("authAfter")
        guard after != .some(nil), authAfter != .some(nil), after != nil || authAfter != nil else {
            return Self.error(400, #"save a cursor with {"after": POSITION} (every feed entry through POSITION is handled) or {"authAfter": POSITION} (every auth event)"#)
        }
        guard try consumers.advance(request.namespace, name, to: after ?? nil, authAfter: authAfter ?? nil, at: settings.clock()) else {
            return Self.error(404, "no functions process \"\(name)\" in \(request.namespace): register it first (PUT /.settings/functions/\(name).json)")
        }
        return Self.json(200, #"{"status":"saved"}"#)
    }

    private func park(_ name: String, _ request: HookRequest) throws -> HTTPResponse {
        guard let body = try? Node(jsonBytes: request.body), let function = body.child("function").stringValue, let id = body.child("id").stringValue,
            case .integer(let position)? = body.child("position").leafValue, case .integer(let attempts)? = body.child("attempts").leafValue,
            let error = body.child("error").stringValue, body.child("event").hasChildren
        else {
            return Self.error(400, #"park an event with {"function", "id", "position", "attempts", "error", "event": {…}}"#)
        }
        guard try consumers.consumer(request.namespace, name) != nil else {
            return Self.error(404, "no functions process \"\(name)\" in \(request.namespace): register it first")
        }
        let event = ParkedEvent(
            function: String(function.prefix(128)), eventId: String(id.prefix(64)), position: position, eventJSON: body.child("event").json(),
            attempts: Int(clamping: attempts), error: String(error.prefix(2000)), parkedAt: settings.clock())
        try consumers.park(event, request.namespace, name)
        return Self.json(200, #"{"status":"parked"}"#)
    }

    private func parkedJSON(_ name: String, _ namespace: String) throws -> String {
        let rows = try consumers.parked(namespace, name).map { event in
            "{\"function\":\(Node(event.function).json()),\"id\":\(Node(event.eventId).json()),\"position\":\(event.position),"
                + "\"attempts\":\(event.attempts),\"error\":\(Node(event.error).json()),\"parkedAt\":\(event.parkedAt),\"event\":\(event.eventJSON)}"
        }
        return "{\"parked\":[" + rows.joined(separator: ",") + "]}"
    }

    private func statusJSON(of namespace: String) throws -> String {
        let rows = try consumers.consumers(namespace).map { consumer in
            "{\"name\":\(Node(consumer.name).json()),\"paths\":\(consumer.pathsJSON),\"after\":\(consumer.after),\"authAfter\":\(consumer.authAfter.map(String.init) ?? "null"),"
                + "\"seenAt\":\(consumer.seenAt),\"parked\":\(try consumers.parkedCount(namespace, consumer.name))}"
        }
        return "{\"functions\":[" + rows.joined(separator: ",") + "]}"
    }
}
