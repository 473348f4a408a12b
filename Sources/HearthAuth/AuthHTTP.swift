import Foundation
import HearthProtocol

extension HTTPRequest {
    /// The last value of query parameter `name`; auth's endpoints read each once.
    func query(_ name: String) -> String? { queryItems.first { $0.name == name }?.value }
}

extension HTTPResponse {
    static func json(_ status: Int, _ object: Any) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("content-type", "application/json; charset=utf-8")], body: JSONText.bytes(object))
    }
}

/// A request body, normalised as Firebase's servers do (docs/auth.md §1.4): snake_case keys become
/// camelCase, and readers coerce numbers sent as strings and strings sent as numbers.
struct RequestBody {
    var fields: [String: Any]

    init(fields: [String: Any]) { self.fields = fields }

    /// Parses JSON, or `application/x-www-form-urlencoded` when `form` (the JS SDK's token refresh).
    init(bytes: [UInt8], form: Bool) throws(AuthError) {
        if form {
            var fields: [String: Any] = [:]
            for pair in String(decoding: bytes, as: UTF8.self).split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = Self.formDecode(parts[0]), value = parts.count > 1 ? Self.formDecode(parts[1]) : ""
                fields[Self.camelCase(name)] = value
            }
            self.fields = fields
            return
        }
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            fields = [:]
            return
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)), let dictionary = object as? [String: Any]
        else { throw AuthError.parseError }
        fields = Self.normalise(dictionary) as? [String: Any] ?? [:]
    }

    static func normalise(_ value: Any) -> Any {
        if let dictionary = value as? [String: Any] {
            var result: [String: Any] = [:]
            for (key, item) in dictionary { result[camelCase(key)] = normalise(item) }
            return result
        }
        if let array = value as? [Any] { return array.map(normalise) }
        return value
    }

    static func camelCase(_ key: String) -> String {
        guard key.contains("_") else { return key }
        var result = ""
        var upper = false
        for character in key {
            if character == "_" { upper = !result.isEmpty; continue }
            // uppercased() can be longer than one character ("ß" → "SS"): appended as a string.
            if upper { result += character.uppercased() } else { result.append(character) }
            upper = false
        }
        return result
    }

    static func formDecode(_ text: Substring) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") }) else { return String(text) }
        return text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
    }

    func has(_ key: String) -> Bool { fields[key] != nil && !(fields[key] is NSNull) }
    func isNull(_ key: String) -> Bool { fields[key] is NSNull }

    func string(_ key: String) -> String? {
        switch fields[key] {
        case let text as String: return text
        case let number as NSNumber: return number.stringValue
        default: return nil
        }
    }

    func bool(_ key: String) -> Bool? {
        switch fields[key] {
        case let flag as Bool: return flag
        case let number as NSNumber: return number.intValue != 0
        case let text as String: return text == "true" ? true : text == "false" ? false : nil
        default: return nil
        }
    }

    func int64(_ key: String) -> Int64? {
        switch fields[key] {
        case let number as NSNumber: return Self.exactInt64(number)
        case let text as String: return Int64(text)
        default: return nil
        }
    }

    /// The integer a JSON number holds; nil for fractions and values outside Int64, which `int64Value`
    /// would silently turn into Int64.min or truncate.
    static func exactInt64(_ number: NSNumber) -> Int64? {
        let value = number.int64Value
        return Double(value) == number.doubleValue ? value : nil
    }

    func strings(_ key: String) -> [String] {
        if let single = string(key) { return [single] }
        return (fields[key] as? [Any] ?? []).compactMap { ($0 as? String) ?? ($0 as? NSNumber)?.stringValue }
    }

    /// An enum sent as its name or as its proto index (Android), as the name.
    func enumValue(_ key: String, cases: [String]) -> String? {
        if let name = fields[key] as? String { return name }
        guard let index = (fields[key] as? NSNumber)?.intValue else { return nil }
        return cases.indices.contains(index) ? cases[index] : nil
    }

    func objects(_ key: String) -> [RequestBody] {
        (fields[key] as? [Any] ?? []).compactMap { ($0 as? [String: Any]).map(RequestBody.init(fields:)) }
    }
}
