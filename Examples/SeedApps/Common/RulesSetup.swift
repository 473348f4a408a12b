import Foundation
import HearthBolt

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Deploys the seed apps' rules to a namespace that has none yet (the server's defaults), so an app
/// works against a fresh `make run` server with no other step. A namespace with rules of its own is
/// left alone.
public enum RulesSetup {
    public enum Outcome: Equatable, Sendable {
        case deployed(String), kept, skipped(String)
    }

    /// The rules the server uses until some are deployed (open with --emulator, locked otherwise).
    static func isDefault(_ source: String) -> Bool {
        let compact = source.filter { !$0.isWhitespace }
        return compact == #"{"rules":{".read":true,".write":true}}"# || compact == #"{"rules":{".read":false,".write":false}}"#
    }

    public static func ensure(_ options: AppOptions) async -> Outcome {
        guard let components = URLComponents(string: options.databaseURL), let host = components.host else {
            return .skipped("the URL has no host")
        }
        let namespace = components.queryItems?.first { $0.name == "ns" }?.value ?? String(host.split(separator: ".").first ?? "")
        let origin = "\(components.scheme ?? "http")://\(host)" + (components.port.map { ":\($0)" } ?? "")
        guard let url = URL(string: "\(origin)/.settings/rules.json?ns=\(namespace)") else { return .skipped("bad URL") }
        let token = options.adminToken
            ?? (try? String(contentsOfFile: options.dataDirectory + "/admin-token", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            ?? "owner"
        var read = URLRequest(url: url)
        read.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        read.timeoutInterval = 5
        guard let (data, response) = try? await URLSession.shared.data(for: read) else {
            return .skipped("the server at \(origin) did not answer: is it running ('make run')?")
        }
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            return .skipped("the rules could not be checked (pass the server's --data directory or --token)")
        }
        guard isDefault(String(decoding: data, as: UTF8.self)) else { return .kept }
        guard let file = rulesFile(options), let bolt = try? String(contentsOfFile: file, encoding: .utf8) else {
            return .skipped("Examples/rules/seed-apps.bolt was not found (pass --rules)")
        }
        let json: String
        do { json = try BoltCompiler.compile(source: bolt) } catch { return .skipped("the rules do not compile: \(error)") }
        var write = URLRequest(url: url)
        write.httpMethod = "PUT"
        write.httpBody = Data(json.utf8)
        write.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        write.timeoutInterval = 10
        guard let (_, written) = try? await URLSession.shared.data(for: write), (written as? HTTPURLResponse)?.statusCode == 200 else {
            return .skipped("the server refused the rules")
        }
        return .deployed(namespace)
    }

    static func rulesFile(_ options: AppOptions) -> String? {
        if let file = options.rulesFile { return file }
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return ["Examples/rules/seed-apps.bolt", sources.appendingPathComponent("rules/seed-apps.bolt").path]
            .first { FileManager.default.fileExists(atPath: $0) }
    }
}
