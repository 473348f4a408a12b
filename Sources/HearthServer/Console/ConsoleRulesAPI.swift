import HearthCore
import HearthProtocol
import HearthRules

/// `/console/api/rules…` (docs/console-api.md, "Rules"): the rules editor's source and history, checking
/// and deploying JSON or Bolt, rolling back, and the simulator.
extension Console {
    func consoleRules(_ request: HTTPRequest, endpoint: String, responder: any HTTPResponder) throws(RESTError) {
        let ns = try consoleNamespaceName(request)
        switch (request.method, endpoint) {
        case (.get, "rules"):
            withConsoleNamespace(ns, responder: responder) { [namespaces] namespace in
                responder.respond(RESTResponses.json(200, Array(Self.rulesJSON(namespace, history: namespaces.history(ns)).utf8)))
            }
        case (.get, "rules/version"):
            let wanted = Self.parameter("version", of: request).flatMap { Int($0) }
            // The history is read when the namespace opens.
            withConsoleNamespace(ns, responder: responder) { [namespaces] _ throws(RESTError) in
                guard let version = namespaces.history(ns).first(where: { $0.version == wanted }) else {
                    throw RESTError(404, "No version \(wanted.map(String.init) ?? "?") of the rules of '\(ns)'")
                }
                responder.respond(RESTResponses.json(200, Array(version.json.utf8)))
            }
        case (.post, "rules/check"):
            let draft = try Self.draft(request.body)
            switch draft.compile() {
            case .success(let compiled):
                responder.respond(RESTResponses.json(200, Array("{\"ok\":true,\"json\":\(Node(compiled.json).json())}".utf8)))
            case .failure(let problem):
                responder.respond(RESTResponses.json(200, Array("{\"ok\":false,\"error\":\(problem.json)}".utf8)))
            }
        case (.post, "rules/deploy"):
            let draft = try Self.draft(request.body)
            withConsoleNamespace(ns, responder: responder) { namespace in
                self.deploy(draft, to: namespace, responder: responder)
            }
        case (.post, "rules/rollback"):
            guard let body = try? Node(jsonBytes: request.body), case .integer(let wanted)? = body.child("version").leafValue else {
                throw Self.noSuchVersion
            }
            withConsoleNamespace(ns, responder: responder) { namespace throws(RESTError) in
                guard let version = self.namespaces.history(ns).first(where: { Int64($0.version) == wanted }) else { throw Self.noSuchVersion }
                self.deploy(RulesDraft(source: version.source, format: version.format), to: namespace, responder: responder)
            }
        case (.post, "rules/simulate"):
            let (simulation, draft) = try Self.simulation(request.body)
            withConsoleNamespace(ns, responder: responder) { namespace throws(RESTError) in
                var rules = namespace.rules
                if let draft {
                    switch draft.compile() {
                    case .success(let compiled): rules = compiled.rules
                    case .failure(let problem):
                        throw RESTError(400, "The draft does not compile: line \(problem.line), column \(problem.column): \(problem.message)")
                    }
                }
                let decision = simulation.decide(rules, root: namespace.database.root, now: self.clock())
                // Lines are found in JSON only: a Bolt text (the draft, or what was deployed) has none to show.
                let deployedAsBolt = self.namespaces.history(ns).last?.format == .bolt
                let source = draft.map { $0.format == .json ? $0.source : "" } ?? (deployedAsBolt ? "" : rules.source)
                responder.respond(RESTResponses.json(200, Array(Self.decisionJSON(decision, source: source).utf8)))
            }
        default:
            throw RESTError(404, "No console API \(request.method.rawValue) \(endpoint.prefix(100))")
        }
    }

    private static let noSuchVersion = RESTError(400, "Send {\"version\": N} naming a version in the history")

    /// Compiles, stores (with a history version, off the loop) and then applies `draft`, answering once
    /// stored; a draft that does not compile is answered 400 with its line and column.
    private func deploy(_ draft: RulesDraft, to namespace: Namespace, responder: any HTTPResponder) {
        switch draft.compile() {
        case .failure(let problem):
            responder.respond(RESTResponses.json(400, Array("{\"ok\":false,\"error\":\(problem.json)}".utf8)))
        case .success(let compiled):
            namespaces.saveRules(compiled.json, for: namespace, deployed: (draft.format, draft.source), now: clock()) { [self] result in
                switch result {
                case .success(let version):
                    namespace.replaceRules(compiled.rules, now: clock())
                    responder.respond(RESTResponses.json(200, Array("{\"ok\":true,\"version\":\(version)}".utf8)))
                case .failure(let error):
                    responder.respond(RESTResponses.error(RESTError(500, "Could not store the rules: \(error)")))
                }
            }
        }
    }

    /// The deployed source (as deployed: Bolt stays Bolt) and the history, newest first.
    private static func rulesJSON(_ namespace: Namespace, history: [RulesVersion]) -> String {
        // The last version is what applies only if nothing replaced the rules file since (it always is,
        // unless the file was edited by hand).
        var source = namespace.rules.source
        var format = RulesVersion.Format.json
        var currentVersion: Int?
        if let latest = history.last, latest.format == .bolt || latest.source == namespace.rules.source {
            (source, format, currentVersion) = (latest.source, latest.format, latest.version)
        }
        let rows = history.reversed().map { version in
            "{\"version\":\(version.version),\"deployedAt\":\(version.deployedAt),\"format\":\"\(version.format.rawValue)\","
                + "\"bytes\":\(version.source.utf8.count),\"current\":\(version.version == currentVersion)}"
        }
        return "{\"source\":\(Node(source).json()),\"format\":\"\(format.rawValue)\",\"deployed\":\(namespace.rulesDeployed),"
            + "\"history\":[\(rows.joined(separator: ","))]}"
    }

    private static func draft(_ body: [UInt8]) throws(RESTError) -> RulesDraft {
        guard let node = try? Node(jsonBytes: body), let source = node.child("source").stringValue else {
            throw RESTError(400, "Send {\"source\": \"…\", \"format\": \"json\" or \"bolt\"}")
        }
        let format = node.child("format").stringValue.flatMap(RulesVersion.Format.init(rawValue:)) ?? .json
        return RulesDraft(source: source, format: format)
    }

    private static func simulation(_ body: [UInt8]) throws(RESTError) -> (RulesSimulation, RulesDraft?) {
        guard let node = try? Node(jsonBytes: body),
            let operation = node.child("operation").stringValue.flatMap(RulesSimulation.Operation.init(rawValue:))
        else { throw RESTError(400, "Send {\"operation\": \"read\", \"set\" or \"update\", \"path\": \"/…\"}") }
        let path = Path(node.child("path").stringValue ?? "/")
        guard path.keys.count <= Limits.pathDepthMax else { throw RESTError(400, "The path is deeper than \(Limits.pathDepthMax) keys") }
        let auth = node.child("auth")
        var simulation = RulesSimulation(operation: operation, path: path)
        if let uid = auth.child("uid").stringValue, !uid.isEmpty {
            simulation.uid = uid
            simulation.claims = auth.child("token")
        }
        simulation.value = node.child("value")
        if operation == .update && !simulation.value.hasChildren {
            throw RESTError(400, "An update's value is an object of paths (relative to the path) and their new values")
        }
        // What a real request would refuse before the rules are asked is refused here too, the same way.
        do throws(DataError) {
            switch operation {
            case .read: try KeyValidation.validate(readPath: path)
            case .set:
                try KeyValidation.validate(writePath: path)
                try KeyValidation.validate(value: simulation.value, at: path)
            case .update:
                var entries: [Path] = []
                for (key, child) in simulation.value.children {
                    let full = path.appending(path: Path(key.string))
                    try KeyValidation.validate(writePath: full)
                    try KeyValidation.validate(value: child, at: full)
                    entries.append(full)
                }
                if let (a, b) = Path.firstOverlap(in: entries) {
                    throw DataError(.overlappingPaths, "Paths '\(a)' and '\(b)' overlap in one update")
                }
            }
        } catch {
            throw RESTError(400, error.message)
        }
        let draft = node.child("source").stringValue.map { source in
            RulesDraft(source: source, format: node.child("format").stringValue.flatMap(RulesVersion.Format.init(rawValue:)) ?? .json)
        }
        return (simulation, draft)
    }

    private static func decisionJSON(_ decision: RuleDecision, source: String) -> String {
        var rule = "null"
        if let decided = decision.rule {
            let line = source.isEmpty ? nil : RulesSimulation.line(of: decided, in: source)
            rule = "{\"kind\":\"\(decided.kind.rawValue)\",\"pattern\":\(Node(decided.pattern).json()),"
                + "\"path\":\(Node(decided.path.slashed).json()),\"expression\":\(Node(decided.expression).json()),"
                + "\"line\":\(line.map(String.init) ?? "null")}"
        }
        return "{\"allowed\":\(decision.allowed),\"rule\":\(rule),\"explanation\":\(Node(decision.reason).json())}"
    }
}
