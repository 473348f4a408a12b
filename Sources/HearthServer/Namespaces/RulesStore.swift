import Foundation

/// A namespace's rules as a file, `<data>/<namespace>.rules.json`, written to a temporary file and
/// renamed, so a crash never leaves half a file. Part of ``RulesStorage/files(directory:log:)`` (with
/// `--storage` the rules are in PostgreSQL instead).
struct RulesStore {
    let directory: String

    func file(_ namespace: String) -> String {
        (directory.hasSuffix("/") ? directory : directory + "/") + namespace + ".rules.json"
    }

    func load(_ namespace: String) -> String? {
        guard let data = FileManager.default.contents(atPath: file(namespace)) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    func delete(_ namespace: String) { try? FileManager.default.removeItem(atPath: file(namespace)) }

    /// Writes a temporary file, owner-only (rules describe who may read what), and renames it over the
    /// old one.
    func save(_ source: String, for namespace: String) throws {
        let path = file(namespace)
        let partial = path + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        guard FileManager.default.createFile(
            atPath: partial, contents: Data(source.utf8), attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: partial]) }
        guard rename(partial, path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
    }
}

/// Rules source text: JSON that may carry `//` and `/* */` comments (§8.1: firebase-tools uploads the file verbatim).
enum RulesText {
    /// The source with comments replaced by spaces (string contents untouched), ready for a JSON parser.
    static func stripComments(_ source: String) -> String {
        var output: [UInt8] = []
        let bytes = Array(source.utf8)
        var index = 0
        var inString = false
        while index < bytes.count {
            let byte = bytes[index]
            if inString {
                output.append(byte)
                if byte == UInt8(ascii: "\\"), index + 1 < bytes.count {
                    output.append(bytes[index + 1])
                    index += 2
                    continue
                }
                if byte == UInt8(ascii: "\"") { inString = false }
                index += 1
                continue
            }
            if byte == UInt8(ascii: "\"") { inString = true }
            if byte == UInt8(ascii: "/"), index + 1 < bytes.count {
                if bytes[index + 1] == UInt8(ascii: "/") {
                    while index < bytes.count && bytes[index] != 0x0A { index += 1 }
                    continue
                }
                if bytes[index + 1] == UInt8(ascii: "*") {
                    index += 2
                    while index + 1 < bytes.count && !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/")) {
                        index += 1
                    }
                    index += 2
                    output.append(0x20)
                    continue
                }
            }
            output.append(byte)
            index += 1
        }
        return String(decoding: output, as: UTF8.self)
    }
}

/// The admin credential of non-emulator mode: 32 random bytes as hex in `<data>/admin-token` (mode 0600),
/// created on first start and kept across restarts.
public enum AdminToken {
    public static func file(in directory: String) -> String {
        (directory.hasSuffix("/") ? directory : directory + "/") + "admin-token"
    }

    /// Reads the token, creating it first when there is none.
    public static func loadOrCreate(in directory: String) throws -> String {
        let path = file(in: directory)
        if let data = FileManager.default.contents(atPath: path) {
            let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !token.isEmpty { return token }
        }
        var generator = SystemRandomNumberGenerator()
        let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        guard FileManager.default.createFile(
            atPath: path, contents: Data((token + "\n").utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        return token
    }
}
