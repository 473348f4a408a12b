import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import HearthCore

/// `hearth hooks …`: a running server's webhooks (docs/functions.md), through its admin endpoints:
///
///     hearth hooks deploy NS FILE        # PUT /.settings/hooks.json
///     hearth hooks get NS                # the deployed document, secrets hidden
///     hearth hooks status NS             # each hook's position, failures and dead letters
///     hearth hooks log NS [--hook NAME] [--limit N]
///     hearth hooks dead NS [--hook NAME]
///     hearth hooks redeliver NS HOOK [EVENT_ID]
///
/// Each takes `--url`, `--data DIR` or `--token TOKEN` as `hearth rules deploy` does.
enum HooksCommand {
    static let usage = """
        Usage: hearth hooks deploy NS FILE | get NS | status NS | log NS [--hook NAME] [--limit N] | dead NS [--hook NAME]
               | redeliver NS HOOK [EVENT_ID]    (each with [--url URL] [--data DIR] [--token TOKEN])
        """

    static func run<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ arguments: [String], output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        if arguments.isEmpty {
            print(usage, to: &errorOutput)
            return .usageError
        }
        if arguments.contains(where: { $0 == "-h" || $0 == "--help" }) {
            print(usage + "\nWebhooks: docs/functions.md.", to: &output)
            return .success
        }
        guard let parsed = CommandArguments.parse(arguments, valueOptions: ["--hook", "--limit", "--url", "--data", "--token"], command: "hooks", errorOutput: &errorOutput) else {
            return .usageError
        }
        let (positional, options) = (parsed.positional, parsed.options)
        let action = positional.first ?? ""
        let expected: ClosedRange<Int>
        switch action {
        case "deploy": expected = 3...3
        case "get", "status", "log", "dead": expected = 2...2
        case "redeliver": expected = 3...4
        default:
            print("hearth hooks: unknown action '\(action.prefix(40))'.\n\(usage)", to: &errorOutput)
            return .usageError
        }
        guard expected.contains(positional.count) else {
            print(usage, to: &errorOutput)
            return .usageError
        }
        let namespace = positional[1]
        var method = "GET"
        var endpoint = action == "get" || action == "deploy" ? "hooks" : "hooks/\(action)"
        var body: Data?
        var query = [URLQueryItem(name: "ns", value: namespace)]
        switch action {
        case "deploy":
            guard let file = FileManager.default.contents(atPath: positional[2]) else {
                print("hearth hooks: cannot read \(positional[2]).", to: &errorOutput)
                return .failure
            }
            method = "PUT"
            body = file
        case "redeliver":
            method = "POST"
            endpoint = "hooks/redeliver"
            var request = ["hook": Node(positional[2])]
            if positional.count == 4 { request["id"] = Node(positional[3]) }
            var node = Node.empty
            for (key, value) in request { node.setChild(ChildKey(key), to: value) }
            body = Data(node.json().utf8)
        default:
            for name in ["hook", "limit"] {
                if let value = options["--" + name] { query.append(URLQueryItem(name: name, value: value)) }
            }
        }
        if let limit = options["--limit"], UInt(limit) == nil {
            print("hearth hooks: --limit must be a whole number, not '\(limit.prefix(20))'.", to: &errorOutput)
            return .usageError
        }
        let url = options["--url"] ?? "http://127.0.0.1:9000"
        guard var components = URLComponents(string: (url.hasSuffix("/") ? url : url + "/") + ".settings/\(endpoint).json") else {
            print("hearth hooks: '\(url)' is not a URL such as http://127.0.0.1:9000.", to: &errorOutput)
            return .usageError
        }
        components.queryItems = query
        guard let target = components.url else { return .usageError }
        var request = URLRequest(url: target)
        request.httpMethod = method
        request.httpBody = body
        let credential = AdminRequest.credential(token: options["--token"], dataDirectory: options["--data"] ?? "hearth-data")
        request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
        request.timeoutInterval = 90
        switch AdminRequest.send(request) {
        case .failure(let error):
            print("hearth hooks: could not reach \(url) (\(error.localizedDescription)). Is 'hearth serve' running? Pass its address with --url.", to: &errorOutput)
            return .failure
        case .success(let (status, text)):
            guard status == 200 else {
                let message = (try? Node(json: text))?.child(at: Path("error")).stringValue ?? text
                print("hearth hooks: the server said \(status): \(message)", to: &errorOutput)
                if status == 401 { print("Pass the admin token with --token or the server's --data directory with --data.", to: &errorOutput) }
                return .failure
            }
            switch action {
            case "deploy": print("Deployed the hooks of \(namespace) from \(positional[2]).", to: &output)
            case "redeliver": print("Redelivering: \(text)", to: &output)
            default: print(text, to: &output)
            }
            return .success
        }
    }
}
