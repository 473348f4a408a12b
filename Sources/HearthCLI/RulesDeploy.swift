import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import HearthServer

/// `hearth rules deploy NS RULES [--url URL] [--data DIR] [--token TOKEN]`: checks the rules here, then
/// sends them to the running server with `PUT /.settings/rules.json` (as firebase-tools deploys to the
/// emulator), so they take effect at once and live streams and listens that lose access are revoked.
enum RulesDeploy {
    static func run<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ arguments: [String], output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        var positional: [String] = []
        var url = "http://127.0.0.1:9000"
        var dataDirectory = "hearth-data"
        var token: String?
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if ["--url", "--data", "--token"].contains(argument) {
                guard index + 1 < arguments.count else {
                    print("hearth rules deploy: \(argument) needs a value.", to: &errorOutput)
                    return .usageError
                }
                let value = arguments[index + 1]
                switch argument {
                case "--url": url = value
                case "--data": dataDirectory = value
                default: token = value
                }
                index += 2
                continue
            }
            positional.append(argument)
            index += 1
        }
        guard positional.count == 2 else {
            print("Usage: hearth rules deploy NS RULES [--url URL] [--data DIR] [--token TOKEN]", to: &errorOutput)
            return .usageError
        }
        let (namespace, file) = (positional[0], positional[1])
        guard let source = RulesCommand.rulesSource(file, errorOutput: &errorOutput),
            RulesCommand.ruleSet(file, errorOutput: &errorOutput) != nil
        else { return .failure }
        let credential = AdminRequest.credential(token: token, dataDirectory: dataDirectory)
        guard var components = URLComponents(string: url.hasSuffix("/") ? url + ".settings/rules.json" : url + "/.settings/rules.json")
        else {
            print("hearth rules deploy: '\(url)' is not a URL such as http://127.0.0.1:9000.", to: &errorOutput)
            return .usageError
        }
        components.queryItems = [URLQueryItem(name: "ns", value: namespace)]
        guard let target = components.url else { return .usageError }
        var request = URLRequest(url: target)
        request.httpMethod = "PUT"
        request.httpBody = Data(source.utf8)
        request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
        request.timeoutInterval = 30
        switch AdminRequest.send(request) {
        case .failure(let error):
            print("hearth rules deploy: could not reach \(url) (\(error.localizedDescription)). Is 'hearth serve' running? "
                + "Pass its address with --url.", to: &errorOutput)
            return .failure
        case .success(let (status, body)):
            guard status == 200 else {
                print("hearth rules deploy: the server refused the rules (\(status)): \(body)", to: &errorOutput)
                if status == 401 { print("Pass the admin token with --token or the server's --data directory with --data.", to: &errorOutput) }
                return .failure
            }
            print("Deployed \(file) to namespace '\(namespace)' at \(url).", to: &output)
            return .success
        }
    }
}
