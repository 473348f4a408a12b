import HearthCore
import HearthProtocol
import HearthRules

/// `/.settings/rules.json` (docs/protocol.md §8.1): a namespace's rules read back as uploaded (or as
/// strict JSON), and replaced: compiled, stored (off the loop), then applied, taking back the streams
/// and listens they no longer allow. The router has checked that the caller may manage rules. Loop
/// thread only.
struct RulesEndpoint {
    let clock: () -> Int64
    let registry: NamespaceRegistry

    func serve(_ request: HTTPRequest, method: HTTPRequest.Method, namespace: Namespace, responder: any HTTPResponder)
        throws(RESTError)
    {
        switch method {
        case .get, .head:
            let source = namespace.rules.source
            let strict = request.queryItems.contains { $0.name == "format" && $0.value == "strict" }
            if strict {
                guard let node = try? Node(json: RulesText.stripComments(source)) else {
                    throw RESTError(500, "The stored rules are not valid JSON")
                }
                responder.respond(RESTResponses.json(200, Array(node.json(.export).utf8)))
            } else {
                responder.respond(RESTResponses.json(200, Array(source.utf8)))
            }
        case .put:
            let source = String(decoding: request.body, as: UTF8.self)
            let rules: RuleSet
            do { rules = try RuleSet(source: source) } catch {
                // firebase-tools prints this string and expects the line in it (§8.1).
                throw RESTError(400, "Error saving rules - Line \(error.line), column \(error.column): \(error.message)")
            }
            // Answered once stored: the rules apply from then on, and requests meanwhile see the old ones.
            registry.saveRules(source, for: namespace, now: clock()) { [clock] result in
                switch result {
                case .success:
                    namespace.replaceRules(rules, now: clock())
                    responder.respond(RESTResponses.json(200, Array(#"{"status":"ok"}"#.utf8)))
                case .failure(let error):
                    responder.respond(RESTResponses.error(RESTError(500, "Could not store the rules: \(error)")))
                }
            }
        default:
            throw RESTError(405, "Rules are read with GET and replaced with PUT")
        }
    }
}
