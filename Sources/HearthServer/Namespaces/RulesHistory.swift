import Foundation
import HearthCore

/// One deployed version of a namespace's rules: what was deployed (the Bolt text when it came as Bolt),
/// when (milliseconds since 1970), and its number (1, 2, … per namespace).
public struct RulesVersion: Equatable, Sendable {
    public enum Format: String, Sendable { case json, bolt }

    public var version: Int
    public var deployedAt: Int64
    public var format: Format
    public var source: String

    var json: String {
        Node([
            "version": Node(version), "deployedAt": Node(deployedAt), "format": Node(format.rawValue), "source": Node(source),
        ]).json()
    }

    public init(version: Int, deployedAt: Int64, format: Format, source: String) {
        self.version = version
        self.deployedAt = deployedAt
        self.format = format
        self.source = source
    }

    /// A line of the history file; nil for one that is not (a line cut short by a crash).
    init?(line: String) {
        guard let node = try? Node(json: line), case .integer(let version)? = node.child("version").leafValue,
            case .integer(let deployedAt)? = node.child("deployedAt").leafValue,
            let format = node.child("format").stringValue.flatMap(Format.init(rawValue:)),
            let source = node.child("source").stringValue
        else { return nil }
        self.init(version: Int(clamping: version), deployedAt: deployedAt, format: format, source: source)
    }
}

/// The versions of a namespace's rules, oldest first, kept in `<data>/<namespace>.rules-history.jsonl`
/// (one JSON object a line, appended; rewritten through a temporary file when trimmed), so the console
/// can diff and roll back. Part of ``RulesStorage/files(directory:log:)``.
struct RulesHistory {
    let directory: String

    func file(_ namespace: String) -> String {
        (directory.hasSuffix("/") ? directory : directory + "/") + namespace + ".rules-history.jsonl"
    }

    func load(_ namespace: String) -> [RulesVersion] {
        guard let data = FileManager.default.contents(atPath: file(namespace)) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { RulesVersion(line: String($0)) }
    }

    /// Stores `versions` after `version` was added to them: appended, or the whole file rewritten when
    /// trimmed.
    func save(_ versions: [RulesVersion], added version: RulesVersion, for namespace: String) throws {
        let file = file(namespace)
        if versions.count < RulesStorage.versionsMax, let handle = FileHandle(forWritingAtPath: file) {
            defer { try? handle.close() }
            try handle.seekToEnd()
            try handle.write(contentsOf: Data((version.json + "\n").utf8))
            return
        }
        let text = versions.map { $0.json + "\n" }.joined()
        let partial = file + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        guard FileManager.default.createFile(atPath: partial, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]),
            rename(partial, file) == 0
        else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file]) }
    }

    func delete(_ namespace: String) { try? FileManager.default.removeItem(atPath: file(namespace)) }
}
