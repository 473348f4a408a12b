import Foundation
public import HearthCore

/// A JSON value from a fixture or specification file, decoded with Foundation's `JSONDecoder` (not
/// HearthCore's parser, so a parser bug cannot hide in the reader that checks it), with nulls and object
/// members kept as they are in the file, so a query object can tell `{"ep": null}` (`endAt(null)`) from
/// no `ep` at all.
///
/// Integers are tried before doubles so large integers stay exact, as Hearth's parser keeps them.
public indirect enum FixtureJSON: Decodable, Sendable, Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([FixtureJSON])
    case object([String: FixtureJSON])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([FixtureJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: FixtureJSON].self))
        }
    }

    /// The value written back as JSON text (object members in no particular order).
    public var jsonText: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .integer(let value): return String(value)
        // Swift's description is the shortest round-trip spelling and valid JSON for finite values.
        case .double(let value): return "\(value)"
        case .string(let value): return Self.quoted(value)
        case .array(let elements): return "[" + elements.map(\.jsonText).joined(separator: ",") + "]"
        case .object(let members):
            return "{" + members.map { Self.quoted($0.key) + ":" + $0.value.jsonText }.joined(separator: ",") + "}"
        }
    }

    public static func quoted(_ string: String) -> String {
        var text = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }

    /// The text, sorted by key: for messages.
    public var description: String {
        switch self {
        case .object(let members):
            return "{" + members.keys.sorted().map { Self.quoted($0) + ":" + members[$0]!.description }.joined(separator: ",") + "}"
        case .array(let elements): return "[" + elements.map(\.description).joined(separator: ",") + "]"
        default: return jsonText
        }
    }

    public subscript(_ key: String) -> FixtureJSON? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    public var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements; empty for anything but an array.
    public var array: [FixtureJSON] {
        if case .array(let value) = self { return value }
        return []
    }

    /// The members; empty for anything but an object.
    public var object: [String: FixtureJSON] {
        if case .object(let value) = self { return value }
        return [:]
    }

    public var keys: Set<String> { Set(object.keys) }

    /// The node this value stands for, built without HearthCore's JSON parser (`.value` and `.priority`
    /// as in docs/protocol.md §5.1, nulls and empty children dropped, as a Firebase client's
    /// `nodeFromJSON` does), for tests that must not share a bug with the parser they check.
    public var nodeBuiltByHand: Node {
        switch self {
        case .null: return .empty
        case .bool(let value): return Node(value)
        case .integer(let value): return Node(value)
        case .double(let value): return Node(value)
        case .string(let value): return Node(value)
        case .array(let elements):
            var node = Node.empty
            for (index, element) in elements.enumerated() { node.setChild(ChildKey(String(index)), to: element.nodeBuiltByHand) }
            return node
        case .object(let members):
            let priority = members[".priority"].flatMap { Priority($0.nodeBuiltByHand) }
            if let value = members[".value"] { return value.nodeBuiltByHand.withPriority(priority) }
            var node = Node.empty
            for (key, member) in members where key != ".priority" { node.setChild(ChildKey(key), to: member.nodeBuiltByHand) }
            return node.withPriority(priority)
        }
    }
}
