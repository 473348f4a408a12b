import Foundation
import HearthCore

/// Values cross the API as Firebase's iOS SDK gives and takes them: dictionaries, arrays, strings and
/// `NSNumber`s (which cast with `as? Int`, `as? Double`, `as? Bool`), `NSNull` for nothing. Inside,
/// they are HearthCore ``Node``s.
enum FoundationValues {
    /// Why a value cannot be stored: Firebase's `InvalidFirebaseData` message.
    struct Invalid: Error, Sendable, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// The node for a value written at `path`: checked as the server checks it (keys, depth, sizes,
    /// `.priority`, `.value`, `.sv`), by writing it as JSON and parsing it with the server's parser.
    static func node(from value: Any?, at path: Path) throws(Invalid) -> Node {
        var json: [UInt8] = []
        try append(value, to: &json, depth: 0)
        do {
            return try Node(jsonBytes: json, options: .init(validation: .write(at: path)))
        } catch {
            throw Invalid(message: "Invalid data at \(path.slashed): \(error.message)")
        }
    }

    /// A leaf (query bounds, priorities): string, number, boolean or nil.
    static func leaf(from value: Any?) throws(Invalid) -> Node {
        guard let value, !(value is NSNull) else { return .empty }
        var json: [UInt8] = []
        try append(value, to: &json, depth: 0)
        guard let node = try? Node(jsonBytes: json), !node.hasChildren else {
            throw Invalid(message: "Expected a string, a number, a boolean or nil, not \(type(of: value))")
        }
        return node
    }

    private static func append(_ value: Any?, to out: inout [UInt8], depth: Int) throws(Invalid) {
        guard depth <= Limits.jsonNestingDepthMax else {
            throw Invalid(message: "Data is nested deeper than \(Limits.jsonNestingDepthMax) levels")
        }
        guard let value else {
            out += Array("null".utf8)
            return
        }
        switch value {
        case is NSNull:
            out += Array("null".utf8)
        case let string as String:
            Node(string).appendJSON(to: &out)
        case let bool as Bool where type(of: value) == Bool.self:
            out += Array((bool ? "true" : "false").utf8)
        case let number as NSNumber:
            try appendNumber(number, to: &out)
        case let dictionary as [String: Any]:
            try appendObject(dictionary.map { ($0.key, $0.value) }, to: &out, depth: depth)
        case let dictionary as [AnyHashable: Any]:
            var entries: [(String, Any)] = []
            for (key, item) in dictionary {
                guard let key = key.base as? String else {
                    throw Invalid(message: "Keys must be strings, not \(type(of: key.base))")
                }
                entries.append((key, item))
            }
            try appendObject(entries, to: &out, depth: depth)
        case let array as [Any]:
            out.append(UInt8(ascii: "["))
            for (index, item) in array.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                try append(item, to: &out, depth: depth + 1)
            }
            out.append(UInt8(ascii: "]"))
        case let optional as Optional<Any>:
            // A nested optional (`[String: Any?]` values): unwrap it.
            switch optional {
            case .some(let inner): try append(inner, to: &out, depth: depth)
            case .none: out += Array("null".utf8)
            }
        default:
            throw Invalid(message: "Cannot store a value of type \(type(of: value)): use dictionaries, arrays, strings, numbers, booleans or nil")
        }
    }

    private static func appendObject(_ entries: [(String, Any)], to out: inout [UInt8], depth: Int) throws(Invalid) {
        out.append(UInt8(ascii: "{"))
        for (index, (key, item)) in entries.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            Node(key).appendJSON(to: &out)
            out.append(UInt8(ascii: ":"))
            try append(item, to: &out, depth: depth + 1)
        }
        out.append(UInt8(ascii: "}"))
    }

    private static func appendNumber(_ number: NSNumber, to out: inout [UInt8]) throws(Invalid) {
        let type = String(cString: number.objCType)
        if type == "c" && (number === kCFBooleanTrueValue || number === kCFBooleanFalseValue || number.int64Value == 0 || number.int64Value == 1) {
            out += Array((number.boolValue ? "true" : "false").utf8)
            return
        }
        if type == "d" || type == "f" {
            let double = number.doubleValue
            guard double.isFinite else { throw Invalid(message: "Cannot store \(double): numbers must be finite") }
            Node(double).appendJSON(to: &out)
            return
        }
        if type == "Q" || type == "L" || type == "I", number.uint64Value > UInt64(Int64.max) {
            Node(number.doubleValue).appendJSON(to: &out)
            return
        }
        Node(number.int64Value).appendJSON(to: &out)
    }

    /// The booleans Foundation hands out, to recognise them whatever their type encoding.
    private static let kCFBooleanTrueValue = NSNumber(value: true)
    private static let kCFBooleanFalseValue = NSNumber(value: false)

    // MARK: Reading

    /// The value of a node as Foundation types: `[String: Any]`, `[Any]` for array-like children (keys
    /// 0…n with more than half present, as Firebase's SDKs read them), `String`, `NSNumber`, and
    /// `NSNull` for the empty node. With `exportFormat`, priorities come along as `.priority` and
    /// leaves with one as `{".value": …, ".priority": …}`.
    static func value(of node: Node, exportFormat: Bool = false) -> Any {
        if node.isEmpty { return NSNull() }
        if let leaf = node.leafValue {
            let value = leafValue(leaf)
            if exportFormat, let priority = node.priority {
                return [".value": value, ".priority": leafValue(priority.node.leafValue ?? .string(""))] as [String: Any]
            }
            return value
        }
        let children = node.children
        if !exportFormat, let array = arrayValue(children) { return array }
        var dictionary: [String: Any] = [:]
        dictionary.reserveCapacity(children.count)
        children.forEach { key, child in
            dictionary[key.string] = value(of: child, exportFormat: exportFormat)
            return true
        }
        if exportFormat, let priority = node.priority {
            dictionary[".priority"] = leafValue(priority.node.leafValue ?? .string(""))
        }
        return dictionary
    }

    static func leafValue(_ leaf: LeafValue) -> Any {
        switch leaf {
        case .bool(let value): return NSNumber(value: value)
        case .integer(let value): return NSNumber(value: value)
        case .double(let value): return NSNumber(value: value)
        case .string(let value): return value
        }
    }

    /// Children keyed 0…n-1 (some missing) become an array when more than half the slots are used.
    private static func arrayValue(_ children: ChildrenMap) -> [Any]? {
        var maxIndex = -1
        var allIntegers = true
        children.forEach { key, _ in
            guard let index = Int(key.string), index >= 0, String(index) == key.string else {
                allIntegers = false
                return false
            }
            maxIndex = max(maxIndex, index)
            return true
        }
        guard allIntegers, maxIndex >= 0, maxIndex < 2 * children.count else { return nil }
        var array = [Any](repeating: NSNull(), count: maxIndex + 1)
        children.forEach { key, child in
            array[Int(key.string)!] = value(of: child)
            return true
        }
        return array
    }

    /// A priority as the SDK returns it: `NSNumber`, `String`, or nil.
    static func priority(of node: Node) -> Any? {
        node.priority.flatMap { $0.node.leafValue }.map(leafValue)
    }
}
