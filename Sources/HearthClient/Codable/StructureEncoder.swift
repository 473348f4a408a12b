public import Foundation

/// Encodes `Encodable` values into the Foundation object trees the Database API takes: Firebase's
/// `Database.Encoder` (FirebaseSharedSwift's `FirebaseDataEncoder`), for
/// `DatabaseReference.setValue(from:)` and friends.
///
/// It works like Foundation's `JSONEncoder`, with the same strategies, but produces values rather
/// than bytes:
/// - keyed containers become `[String: Any]`, unkeyed containers `[Any]`, nil `NSNull()`;
/// - `Bool` becomes `NSNumber(value: Bool)` (the shared boolean `NSNumber`, so it reads back as a
///   boolean), integers an `NSNumber` of their own width, `Float` and `Double` an `NSNumber` of a
///   `Double`, strings stay `String`;
/// - `URL` becomes its `absoluteString`, `Decimal` an `NSDecimalNumber`;
/// - there is an extra ``DataEncodingStrategy/blob`` strategy that keeps `Data` as it is, and no output
///   formatting options.
///
/// The settings are plain stored properties, as in Firebase's SDK. Each call to ``encode(_:)`` takes a
/// snapshot of them, so one configured encoder may be shared and used from several threads at once;
/// changing its settings while another thread encodes with it is a data race.
open class FirebaseDataEncoder: @unchecked Sendable {
    /// How `Date` values are encoded.
    public enum DateEncodingStrategy {
        /// The date's own `Encodable` implementation: a `Double` of seconds since 1 January 2001 UTC
        /// (`timeIntervalSinceReferenceDate`). This is the default.
        case deferredToDate
        /// An `NSNumber` of the `Double` seconds since 1 January 1970 UTC.
        case secondsSince1970
        /// An `NSNumber` of the `Double` milliseconds since 1 January 1970 UTC (fractions kept).
        case millisecondsSince1970
        /// An ISO 8601 string, as `ISO8601DateFormatter` with `.withInternetDateTime` writes it.
        case iso8601
        /// A string from the given formatter.
        case formatted(DateFormatter)
        /// Whatever the closure encodes into the encoder it is given; a closure that encodes nothing
        /// leaves an empty dictionary, as `JSONEncoder` does.
        case custom((Date, Swift.Encoder) throws -> Void)
    }

    /// How `Data` values are encoded.
    public enum DataEncodingStrategy {
        /// The data's own `Encodable` implementation: an array of byte `NSNumber`s.
        case deferredToData
        /// A Base64 string. This is the default.
        case base64
        /// The `Data` value itself, untouched (Firestore's blobs; unlike `JSONEncoder`, which has no such
        /// strategy). The Realtime Database itself stores only JSON types, so writing it there fails.
        case blob
        /// Whatever the closure encodes into the encoder it is given; a closure that encodes nothing
        /// leaves an empty dictionary, as `JSONEncoder` does.
        case custom((Data, Swift.Encoder) throws -> Void)
    }

    /// What to do with infinite and NaN floating-point values, which JSON (and the database) cannot hold.
    public enum NonConformingFloatEncodingStrategy {
        /// Throw `EncodingError.invalidValue`. This is the default.
        case `throw`
        /// Encode them as the given strings.
        case convertToString(positiveInfinity: String, negativeInfinity: String, nan: String)
    }

    /// How the keys of keyed containers are written.
    public enum KeyEncodingStrategy {
        /// Each key's `stringValue` as it is. This is the default.
        case useDefaultKeys
        /// camelCase keys to snake_case, with `JSONEncoder`'s rules: words split where a lowercase
        /// letter meets an uppercase one and before the last capital of an uppercase run that is
        /// followed by lowercase letters, then lowercased and joined with `_` (`myURLValue` becomes
        /// `my_url_value`, `version4Thing` becomes `version4_thing`). Leading and trailing underscores stay.
        case convertToSnakeCase
        /// The key the closure returns; it is given the coding path, ending with the key to convert.
        case custom((_ codingPath: [CodingKey]) -> CodingKey)
    }

    /// How `Date` values are encoded; ``DateEncodingStrategy/deferredToDate`` by default.
    open var dateEncodingStrategy: DateEncodingStrategy = .deferredToDate
    /// How `Data` values are encoded; ``DataEncodingStrategy/base64`` by default.
    open var dataEncodingStrategy: DataEncodingStrategy = .base64
    /// What to do with infinities and NaN; ``NonConformingFloatEncodingStrategy/throw`` by default.
    open var nonConformingFloatEncodingStrategy: NonConformingFloatEncodingStrategy = .throw
    /// How keys are written; ``KeyEncodingStrategy/useDefaultKeys`` by default.
    open var keyEncodingStrategy: KeyEncodingStrategy = .useDefaultKeys
    /// Handed to every `encode(to:)` as the encoder's `userInfo`.
    open var userInfo: [CodingUserInfoKey: Any] = [:]

    /// An encoder with the default strategies.
    public init() {}

    /// The Foundation object tree for `value`: `[String: Any]`, `[Any]`, `String`, `NSNumber`, `NSNull`
    /// (and `Data` with the ``DataEncodingStrategy/blob`` strategy), ready to be written to the database.
    ///
    /// - Throws: `EncodingError.invalidValue` when a value cannot be represented (a non-finite float
    ///   with the ``NonConformingFloatEncodingStrategy/throw`` strategy, for one), or when `value`
    ///   encodes nothing at all; and any error the value's own `encode(to:)` throws.
    open func encode<T: Encodable>(_ value: T) throws -> Any {
        let encoder = StructureValueEncoder(context: StructureEncodingContext(self), codingPath: [])
        guard let node = try encoder.encodedNode(value, at: []) else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: [], debugDescription: "Top-level \(T.self) did not encode any values."))
        }
        return node.structure
    }
}

// MARK: - Encoding state

/// The encoder's settings, read once per top-level `encode(_:)` so that a run sees one consistent set.
final class StructureEncodingContext {
    let dateStrategy: FirebaseDataEncoder.DateEncodingStrategy
    let dataStrategy: FirebaseDataEncoder.DataEncodingStrategy
    let floatStrategy: FirebaseDataEncoder.NonConformingFloatEncodingStrategy
    let keyStrategy: FirebaseDataEncoder.KeyEncodingStrategy
    let userInfo: [CodingUserInfoKey: Any]

    /// Made on first use and kept for the rest of the run: formatters are costly to create, and this
    /// one is never shared between runs, hence never between threads.
    private(set) lazy var iso8601Formatter: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter
    }()

    init(_ encoder: FirebaseDataEncoder) {
        dateStrategy = encoder.dateEncodingStrategy
        dataStrategy = encoder.dataEncodingStrategy
        floatStrategy = encoder.nonConformingFloatEncodingStrategy
        keyStrategy = encoder.keyEncodingStrategy
        userInfo = encoder.userInfo
    }

    /// The name `key` is written under, in a container at `path`.
    func name(for key: any CodingKey, in path: [any CodingKey]) -> String {
        switch keyStrategy {
        case .useDefaultKeys: return key.stringValue
        case .convertToSnakeCase: return StructureKeyCase.snakeCased(key.stringValue)
        case .custom(let convert): return convert(path + [key]).stringValue
        }
    }

    /// A `Double` (or a widened `Float`, reported as `original`) as an `NSNumber`, or as the strategy's
    /// string when it is not finite.
    func number(_ value: Double, original: Any, at path: [any CodingKey]) throws -> Any {
        if value.isFinite { return NSNumber(value: value) }
        guard case .convertToString(let positiveInfinity, let negativeInfinity, let nan) = floatStrategy else {
            throw EncodingError.invalidValue(
                original,
                .init(
                    codingPath: path,
                    debugDescription: "Unable to encode \(original) directly in a Firebase structure. Use "
                        + "FirebaseDataEncoder.NonConformingFloatEncodingStrategy.convertToString to encode it as a string."))
        }
        if value.isNaN { return nan }
        return value > 0 ? positiveInfinity : negativeInfinity
    }
}

/// An encoded value while encoding is under way. Containers are reference boxes because a container
/// handed out earlier (a nested container, a super-encoder) may still be written after its parent has
/// stored it; the finished tree is read out with ``structure`` once the top-level value is done.
enum StructureEncodedNode {
    /// A finished leaf: `NSNumber`, `String`, `NSNull`, `Data`, or a custom strategy's output.
    case leaf(Any)
    case keyed(StructureKeyedBox)
    case unkeyed(StructureUnkeyedBox)
    /// A super-encoder handed out to the caller: whatever it holds when the run ends.
    case deferred(StructureValueEncoder)

    /// The Foundation value: `[String: Any]` for keyed, `[Any]` for unkeyed, and an empty dictionary for
    /// a super-encoder nobody encoded into (as `JSONEncoder` does).
    var structure: Any {
        switch self {
        case .leaf(let value): return value
        case .keyed(let box): return box.entries.mapValues(\.structure)
        case .unkeyed(let box): return box.items.map(\.structure)
        case .deferred(let encoder): return encoder.storage?.structure ?? [String: Any]()
        }
    }
}

final class StructureKeyedBox {
    var entries: [String: StructureEncodedNode] = [:]
}

final class StructureUnkeyedBox {
    var items: [StructureEncodedNode] = []
}

/// A coding key made up at run time: array positions in coding paths ("Index 3", like Foundation's
/// coders), `super`, and keys taken from the data when decoding.
struct StructureCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }

    init(index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    static let `super` = StructureCodingKey(stringValue: "super")
}

// MARK: - The encoder

/// The `Encoder` handed to `encode(to:)`: it holds one value, and is that value's single-value
/// container itself.
final class StructureValueEncoder: Swift.Encoder {
    let context: StructureEncodingContext
    let codingPath: [any CodingKey]
    /// What has been encoded here so far; nil until something is.
    private(set) var storage: StructureEncodedNode?

    var userInfo: [CodingUserInfoKey: Any] { context.userInfo }

    init(context: StructureEncodingContext, codingPath: [any CodingKey]) {
        self.context = context
        self.codingPath = codingPath
    }

    // Asking for a different kind of container than the one already in use is a bug in the caller's
    // `encode(to:)`, not something data can cause, so it stops the program as Foundation's coders do.

    func container<Key: CodingKey>(keyedBy keyType: Key.Type) -> KeyedEncodingContainer<Key> {
        let box: StructureKeyedBox
        switch storage {
        case nil:
            box = StructureKeyedBox()
            storage = .keyed(box)
        case .keyed(let existing)?:
            box = existing
        default:
            preconditionFailure("Asked for a keyed container at \(codingPath.pathDescription) after encoding something else there.")
        }
        return KeyedEncodingContainer(StructureKeyedEncodingContainer<Key>(encoder: self, box: box, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let box: StructureUnkeyedBox
        switch storage {
        case nil:
            box = StructureUnkeyedBox()
            storage = .unkeyed(box)
        case .unkeyed(let existing)?:
            box = existing
        default:
            preconditionFailure("Asked for an unkeyed container at \(codingPath.pathDescription) after encoding something else there.")
        }
        return StructureUnkeyedEncodingContainer(encoder: self, box: box, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    /// The encoded form of `value` at `path`: nil if it encoded nothing at all.
    ///
    /// Dates, data, URLs and decimals are caught here, before their own `Encodable` implementations,
    /// so that the strategies apply wherever they appear; common leaves skip the child encoder.
    func encodedNode<T: Encodable>(_ value: T, at path: [any CodingKey]) throws -> StructureEncodedNode? {
        switch value {
        case let string as String: return .leaf(string)
        case let int as Int: return .leaf(NSNumber(value: int))
        case let double as Double: return .leaf(try context.number(double, original: double, at: path))
        case let bool as Bool: return .leaf(NSNumber(value: bool))
        case let date as Date: return try encodedDate(date, at: path)
        case let data as Data: return try encodedData(data, at: path)
        case let url as URL: return .leaf(url.absoluteString)
        case let decimal as Decimal: return .leaf(NSDecimalNumber(decimal: decimal))
        default:
            let encoder = StructureValueEncoder(context: context, codingPath: path)
            try value.encode(to: encoder)
            return encoder.storage
        }
    }

    /// Like ``encodedNode(_:at:)``, for a value inside a container, where encoding nothing leaves an
    /// empty dictionary (as `JSONEncoder` does).
    func childNode<T: Encodable>(_ value: T, at path: [any CodingKey]) throws -> StructureEncodedNode {
        try encodedNode(value, at: path) ?? .keyed(StructureKeyedBox())
    }

    private func encodedDate(_ date: Date, at path: [any CodingKey]) throws -> StructureEncodedNode? {
        switch context.dateStrategy {
        case .deferredToDate:
            return try encodedByOwnImplementation(at: path) { try date.encode(to: $0) }
        case .secondsSince1970:
            return .leaf(NSNumber(value: date.timeIntervalSince1970))
        case .millisecondsSince1970:
            return .leaf(NSNumber(value: date.timeIntervalSince1970 * 1000))
        case .iso8601:
            return .leaf(context.iso8601Formatter.string(from: date))
        case .formatted(let formatter):
            return .leaf(formatter.string(from: date))
        case .custom(let encode):
            return try encodedByOwnImplementation(at: path) { try encode(date, $0) } ?? .keyed(StructureKeyedBox())
        }
    }

    private func encodedData(_ data: Data, at path: [any CodingKey]) throws -> StructureEncodedNode? {
        switch context.dataStrategy {
        case .deferredToData:
            return try encodedByOwnImplementation(at: path) { try data.encode(to: $0) }
        case .base64:
            return .leaf(data.base64EncodedString())
        case .blob:
            return .leaf(data)
        case .custom(let encode):
            return try encodedByOwnImplementation(at: path) { try encode(data, $0) } ?? .keyed(StructureKeyedBox())
        }
    }

    /// What `encode` writes into a fresh encoder at `path`.
    private func encodedByOwnImplementation(
        at path: [any CodingKey], _ encode: (StructureValueEncoder) throws -> Void
    ) throws -> StructureEncodedNode? {
        let encoder = StructureValueEncoder(context: context, codingPath: path)
        try encode(encoder)
        return encoder.storage
    }
}

extension StructureValueEncoder: SingleValueEncodingContainer {
    private func store(_ node: StructureEncodedNode) {
        // Encoding two values into one single-value container is a bug in the caller, as in Foundation.
        precondition(storage == nil, "Encoded a second value into the single-value container at \(codingPath.pathDescription).")
        storage = node
    }

    func encodeNil() { store(.leaf(NSNull())) }
    func encode(_ value: Bool) { store(.leaf(NSNumber(value: value))) }
    func encode(_ value: String) { store(.leaf(value)) }
    func encode(_ value: Double) throws { store(.leaf(try context.number(value, original: value, at: codingPath))) }
    func encode(_ value: Float) throws { store(.leaf(try context.number(Double(value), original: value, at: codingPath))) }
    func encode(_ value: Int) { store(.leaf(NSNumber(value: value))) }
    func encode(_ value: Int8) { store(.leaf(NSNumber(value: value))) }
    func encode(_ value: Int16) { store(.leaf(NSNumber(value: value))) }
    func encode(_ value: Int32) { store(.leaf(NSNumber(value: value))) }
    func encode(_ value: Int64) { store(.leaf(NSNumber(value: value))) }
    func encode(_ value: UInt) { store(.leaf(NSNumber(value: value))) }
    func encode(_ value: UInt8) { store(.leaf(NSNumber(value: value))) }
    func encode(_ value: UInt16) { store(.leaf(NSNumber(value: value))) }
    func encode(_ value: UInt32) { store(.leaf(NSNumber(value: value))) }
    func encode(_ value: UInt64) { store(.leaf(NSNumber(value: value))) }

    func encode<T: Encodable>(_ value: T) throws {
        store(try childNode(value, at: codingPath))
    }
}

// MARK: - Containers

struct StructureKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: StructureValueEncoder
    let box: StructureKeyedBox
    let codingPath: [any CodingKey]

    private func set(_ node: StructureEncodedNode, for key: any CodingKey) {
        box.entries[encoder.context.name(for: key, in: codingPath)] = node
    }

    private func number(_ value: NSNumber, for key: Key) { set(.leaf(value), for: key) }

    mutating func encodeNil(forKey key: Key) { set(.leaf(NSNull()), for: key) }
    mutating func encode(_ value: Bool, forKey key: Key) { number(NSNumber(value: value), for: key) }
    mutating func encode(_ value: String, forKey key: Key) { set(.leaf(value), for: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        set(.leaf(try encoder.context.number(value, original: value, at: codingPath + [key])), for: key)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        set(.leaf(try encoder.context.number(Double(value), original: value, at: codingPath + [key])), for: key)
    }
    mutating func encode(_ value: Int, forKey key: Key) { number(NSNumber(value: value), for: key) }
    mutating func encode(_ value: Int8, forKey key: Key) { number(NSNumber(value: value), for: key) }
    mutating func encode(_ value: Int16, forKey key: Key) { number(NSNumber(value: value), for: key) }
    mutating func encode(_ value: Int32, forKey key: Key) { number(NSNumber(value: value), for: key) }
    mutating func encode(_ value: Int64, forKey key: Key) { number(NSNumber(value: value), for: key) }
    mutating func encode(_ value: UInt, forKey key: Key) { number(NSNumber(value: value), for: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) { number(NSNumber(value: value), for: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) { number(NSNumber(value: value), for: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) { number(NSNumber(value: value), for: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) { number(NSNumber(value: value), for: key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        set(try encoder.childNode(value, at: codingPath + [key]), for: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        // Asking twice for the same nested container gives back the same one, so both writers' keys land.
        let name = encoder.context.name(for: key, in: codingPath)
        let nested: StructureKeyedBox
        if case .keyed(let existing)? = box.entries[name] {
            nested = existing
        } else {
            nested = StructureKeyedBox()
            box.entries[name] = .keyed(nested)
        }
        return KeyedEncodingContainer(
            StructureKeyedEncodingContainer<NestedKey>(encoder: encoder, box: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let name = encoder.context.name(for: key, in: codingPath)
        let nested: StructureUnkeyedBox
        if case .unkeyed(let existing)? = box.entries[name] {
            nested = existing
        } else {
            nested = StructureUnkeyedBox()
            box.entries[name] = .unkeyed(nested)
        }
        return StructureUnkeyedEncodingContainer(encoder: encoder, box: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Swift.Encoder { superEncoder(for: StructureCodingKey.super) }
    mutating func superEncoder(forKey key: Key) -> any Swift.Encoder { superEncoder(for: key) }

    private func superEncoder(for key: any CodingKey) -> any Swift.Encoder {
        let encoder = StructureValueEncoder(context: encoder.context, codingPath: codingPath + [key])
        set(.deferred(encoder), for: key)
        return encoder
    }
}

struct StructureUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let encoder: StructureValueEncoder
    let box: StructureUnkeyedBox
    let codingPath: [any CodingKey]

    var count: Int { box.items.count }

    /// The coding path of the next element.
    private var nextPath: [any CodingKey] { codingPath + [StructureCodingKey(index: count)] }

    private func append(_ node: StructureEncodedNode) { box.items.append(node) }
    private func number(_ value: NSNumber) { append(.leaf(value)) }

    mutating func encodeNil() { append(.leaf(NSNull())) }
    mutating func encode(_ value: Bool) { number(NSNumber(value: value)) }
    mutating func encode(_ value: String) { append(.leaf(value)) }
    mutating func encode(_ value: Double) throws {
        append(.leaf(try encoder.context.number(value, original: value, at: nextPath)))
    }
    mutating func encode(_ value: Float) throws {
        append(.leaf(try encoder.context.number(Double(value), original: value, at: nextPath)))
    }
    mutating func encode(_ value: Int) { number(NSNumber(value: value)) }
    mutating func encode(_ value: Int8) { number(NSNumber(value: value)) }
    mutating func encode(_ value: Int16) { number(NSNumber(value: value)) }
    mutating func encode(_ value: Int32) { number(NSNumber(value: value)) }
    mutating func encode(_ value: Int64) { number(NSNumber(value: value)) }
    mutating func encode(_ value: UInt) { number(NSNumber(value: value)) }
    mutating func encode(_ value: UInt8) { number(NSNumber(value: value)) }
    mutating func encode(_ value: UInt16) { number(NSNumber(value: value)) }
    mutating func encode(_ value: UInt32) { number(NSNumber(value: value)) }
    mutating func encode(_ value: UInt64) { number(NSNumber(value: value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        append(try encoder.childNode(value, at: nextPath))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = StructureKeyedBox()
        let path = nextPath
        append(.keyed(nested))
        return KeyedEncodingContainer(StructureKeyedEncodingContainer<NestedKey>(encoder: encoder, box: nested, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = StructureUnkeyedBox()
        let path = nextPath
        append(.unkeyed(nested))
        return StructureUnkeyedEncodingContainer(encoder: encoder, box: nested, codingPath: path)
    }

    mutating func superEncoder() -> any Swift.Encoder {
        let encoder = StructureValueEncoder(context: encoder.context, codingPath: nextPath)
        append(.deferred(encoder))
        return encoder
    }
}

// MARK: - Key case conversion

/// `JSONEncoder`'s and `JSONDecoder`'s snake-case key conversions, for the structure coders.
enum StructureKeyCase {
    /// `key` in snake_case, by `JSONEncoder.KeyEncodingStrategy.convertToSnakeCase`'s rules.
    ///
    /// A word starts at each uppercase letter that follows the previous word's text; when that
    /// uppercase letter begins a run of non-lowercase characters (an acronym such as "URL"), the run
    /// is one word and the next word starts at its last character, the capital of the following word.
    /// The first character never starts a new word, so "URLValue" gives "u_rl_value", as `JSONEncoder`'s does.
    static func snakeCased(_ key: String) -> String {
        let characters = Array(key)
        var wordStarts: [Int] = []
        var searchFrom = 1
        while let upper = firstIndex(in: characters, from: searchFrom, where: isUppercase) {
            wordStarts.append(upper)
            guard let lower = firstIndex(in: characters, from: upper + 1, where: isLowercase) else { break }
            if lower > upper + 1 {
                // An acronym: it ends where the capitalized word before the lowercase letter begins.
                wordStarts.append(lower - 1)
            }
            searchFrom = lower + 1
        }
        var words: [String] = []
        var start = 0
        for end in wordStarts + [characters.count] {
            words.append(String(characters[start..<end]).lowercased())
            start = end
        }
        return words.joined(separator: "_")
    }

    private static func firstIndex(in characters: [Character], from start: Int, where test: (Character) -> Bool) -> Int? {
        guard start < characters.count else { return nil }
        return characters[start...].firstIndex(where: test)
    }

    /// Foundation's `CharacterSet.uppercaseLetters`: general categories Lu and Lt.
    private static func isUppercase(_ character: Character) -> Bool {
        guard let scalar = character.unicodeScalars.first else { return false }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .titlecaseLetter: return true
        default: return false
        }
    }

    /// Foundation's `CharacterSet.lowercaseLetters`: general category Ll.
    private static func isLowercase(_ character: Character) -> Bool {
        character.unicodeScalars.first?.properties.generalCategory == .lowercaseLetter
    }

    /// `key` in camelCase, by `JSONDecoder.KeyDecodingStrategy.convertFromSnakeCase`'s rules: the
    /// words between underscores are joined, the first lowercased and the others capitalized; leading
    /// and trailing underscores stay, and a key with no inner underscore is left as it is.
    static func camelCased(_ key: String) -> String {
        guard let first = key.firstIndex(where: { $0 != "_" }), let last = key.lastIndex(where: { $0 != "_" }) else {
            return key
        }
        let words = key[first...last].split(separator: "_")
        guard let head = words.first, words.count > 1 else { return key }
        let joined = head.lowercased() + words.dropFirst().map(\.capitalized).joined()
        return String(key[..<first]) + joined + String(key[key.index(after: last)...])
    }
}

private extension [any CodingKey] {
    /// The path as dotted keys, for messages.
    var pathDescription: String {
        isEmpty ? "the top level" : map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}
