public import Foundation

/// Decodes `Decodable` values from the Foundation object trees the Database API hands out: Firebase's
/// `Database.Decoder` (FirebaseSharedSwift's `FirebaseDataDecoder`), for `DataSnapshot.data(as:)` and
/// friends.
///
/// It works like Foundation's `JSONDecoder`, with the same strategies, but reads values rather than
/// bytes, and is lenient where the database's data needs it:
/// - it takes `[String: Any]`, `[AnyHashable: Any]` and `NSDictionary`; `[Any]` and `NSArray`;
///   `NSNumber` and Swift's number types and `Bool`; `String` and `NSString`; `NSNull`, and nil
///   optionals wherever a value may be;
/// - the database turns objects keyed "0", "1", … into arrays, and the reverse happens too, so an
///   array decodes from a dictionary whose keys are all array indices (in index order), and a keyed
///   type or dictionary decodes from an array (keyed by index, null elements skipped as absent keys);
/// - the database drops nulls, so a missing key counts as nil for `decodeNil(forKey:)` (`JSONDecoder`
///   throws `keyNotFound` there);
/// - booleans are the boolean `NSNumber`s: an `NSNumber` of 1 is not a `Bool`, and a boolean is not a
///   number;
/// - integers convert exactly or throw `DecodingError.dataCorrupted` (2.5 is not an `Int`, 300 not a
///   `UInt8`); floating-point types take the nearest value, as `JSONDecoder` does, within their range;
/// - there is an extra ``DataDecodingStrategy/blob`` strategy that takes `Data` as it is.
///
/// Like ``FirebaseDataEncoder``, it may be shared once configured: each ``decode(_:from:)`` takes a
/// snapshot of the settings; changing them while another thread decodes is a data race.
open class FirebaseDataDecoder: @unchecked Sendable {
    /// How `Date` values are decoded.
    public enum DateDecodingStrategy {
        /// The date's own `Decodable` implementation: a number of seconds since 1 January 2001 UTC
        /// (`timeIntervalSinceReferenceDate`). This is the default.
        case deferredToDate
        /// A number of seconds since 1 January 1970 UTC.
        case secondsSince1970
        /// A number of milliseconds since 1 January 1970 UTC.
        case millisecondsSince1970
        /// An ISO 8601 string, as `ISO8601DateFormatter` with `.withInternetDateTime` reads it.
        case iso8601
        /// A string the given formatter reads.
        case formatted(DateFormatter)
        /// The date the closure decodes from the decoder it is given.
        case custom((_ decoder: Swift.Decoder) throws -> Date)
    }

    /// How `Data` values are decoded.
    public enum DataDecodingStrategy {
        /// The data's own `Decodable` implementation: an array of byte numbers.
        case deferredToData
        /// A Base64 string. This is the default.
        case base64
        /// A `Data` (or `NSData`) value itself (Firestore's blobs; `JSONDecoder` has no such strategy).
        case blob
        /// The data the closure decodes from the decoder it is given.
        case custom((_ decoder: Swift.Decoder) throws -> Data)
    }

    /// Whether strings stand for infinite and NaN floating-point values, which JSON (and the database)
    /// cannot hold.
    public enum NonConformingFloatDecodingStrategy {
        /// They do not: a string is not a number. This is the default.
        case `throw`
        /// These strings decode as infinity, negative infinity and NaN.
        case convertFromString(positiveInfinity: String, negativeInfinity: String, nan: String)
    }

    /// How the keys found in the data are matched with coding keys.
    public enum KeyDecodingStrategy {
        /// As they are. This is the default.
        case useDefaultKeys
        /// snake_case keys in the data to camelCase, with `JSONDecoder`'s rules: `my_url_value` becomes
        /// `myUrlValue` (so a coding key "myURLValue" does not match it); leading and trailing
        /// underscores stay; keys without inner underscores are left alone.
        case convertFromSnakeCase
        /// The key the closure returns; it is given the coding path, ending with the key found in the data.
        case custom((_ codingPath: [CodingKey]) -> CodingKey)
    }

    /// How `Date` values are decoded; ``DateDecodingStrategy/deferredToDate`` by default.
    open var dateDecodingStrategy: DateDecodingStrategy = .deferredToDate
    /// How `Data` values are decoded; ``DataDecodingStrategy/base64`` by default.
    open var dataDecodingStrategy: DataDecodingStrategy = .base64
    /// Whether strings stand for infinities and NaN; ``NonConformingFloatDecodingStrategy/throw`` by default.
    open var nonConformingFloatDecodingStrategy: NonConformingFloatDecodingStrategy = .throw
    /// How keys in the data are read; ``KeyDecodingStrategy/useDefaultKeys`` by default.
    open var keyDecodingStrategy: KeyDecodingStrategy = .useDefaultKeys
    /// Handed to every `init(from:)` as the decoder's `userInfo`.
    open var userInfo: [CodingUserInfoKey: Any] = [:]

    /// A decoder with the default strategies.
    public init() {}

    /// A `T` decoded from `structure`, a Foundation object tree such as `DataSnapshot.value`.
    ///
    /// - Throws: `DecodingError` when the structure does not fit `T`: `valueNotFound` for null where a
    ///   value is needed (a top-level `NSNull` included, unless `T` is optional), `keyNotFound`,
    ///   `typeMismatch`, `dataCorrupted` for numbers that do not fit and malformed strings; and any
    ///   error `T`'s own `init(from:)` throws.
    open func decode<T: Decodable>(_ type: T.Type, from structure: Any) throws -> T {
        try StructureDecodingContext(self).decodable(structure, as: type, at: [])
    }
}

// MARK: - Reading values

/// A value from the structure, classified: the leaves every conversion starts from.
enum StructureScalar {
    case null
    case bool(Bool)
    case signed(Int64)
    case unsigned(UInt64)
    case floating(Double)
    case decimal(Decimal)
    case string(String)
    /// Anything else: containers, `Data`, types the structure should not hold.
    case other(Any)

    init(_ raw: Any) {
        let value = StructureScalar.unwrapped(raw)
        // NSNumbers first, by metatype rather than `as?`: on Linux an NSNumber casts to Bool and to any
        // Swift number type, so casts cannot tell them apart, while the NSNumber itself knows.
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            self = StructureScalar(number)
            return
        }
        // Swift values next, by exact type or by numeric protocol: never through `as? Bool` or
        // `as? Double` on another type, which could bridge a number to a boolean on some platforms.
        if value is NSNull {
            self = .null
        } else if let string = value as? String {
            self = .string(string)
        } else if type(of: value) == Bool.self, let bool = value as? Bool {
            self = .bool(bool)
        } else if let integer = value as? any BinaryInteger {
            if let signed = Int64(exactly: integer) {
                self = .signed(signed)
            } else if let unsigned = UInt64(exactly: integer) {
                self = .unsigned(unsigned)
            } else {
                self = .other(value)  // An Int128 beyond 64 bits: nothing the database holds.
            }
        } else if let floating = value as? any BinaryFloatingPoint {
            self = .floating(Double(floating))
        } else if let decimal = value as? Decimal {
            self = .decimal(decimal)
        } else {
            self = .other(value)
        }
    }

    private init(_ number: NSNumber) {
        if StructureScalar.isBoolean(number) {
            self = .bool(number.boolValue)
        } else if let decimal = number as? NSDecimalNumber {
            self = .decimal(decimal.decimalValue)
        } else {
            switch String(cString: number.objCType) {
            case "f", "d": self = .floating(number.doubleValue)
            // Unsigned type encodings (Linux gives one only to values beyond Int64.max): read all 64 bits.
            case "C", "S", "I", "L", "Q": self = .unsigned(number.uint64Value)
            default: self = .signed(number.int64Value)
            }
        }
    }

    /// Whether `number` is one of Foundation's two boolean `NSNumber`s, the ones `NSNumber(value: Bool)`,
    /// `JSONSerialization` and the database hand out. Its type encoding, "c", is not enough on its own:
    /// on Apple platforms an `Int8` has it too.
    static func isBoolean(_ number: NSNumber) -> Bool {
        number === NSNumber(value: true) || number === NSNumber(value: false)
    }

    /// Whether `value` is an `NSNumber` whose type encoding is "c".
    static func hasCharType(_ value: Any) -> Bool {
        let value = unwrapped(value)
        guard type(of: value) is NSNumber.Type, let number = value as? NSNumber else { return false }
        return String(cString: number.objCType) == "c"
    }

    /// `value` with any `Optional` wrapping removed: nil becomes `NSNull`, so `[String: Any?]` and a
    /// nil passed as `Any` read as null.
    static func unwrapped(_ value: Any) -> Any {
        guard let optional = value as? any StructureOptionalValue else { return value }
        return optional.structureWrapped.map(unwrapped) ?? NSNull()
    }

    /// What the value is, for messages: "a number", "a string", "null"…
    var description: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .signed(let value): return "the number \(value)"
        case .unsigned(let value): return "the number \(value)"
        case .floating(let value): return "the number \(value)"
        case .decimal(let value): return "the number \(value)"
        case .string: return "a string"
        case .other(let value):
            if StructureDecodingContext.dictionary(value) != nil { return "a dictionary" }
            if value is [Any] { return "an array" }
            return "a value of type \(type(of: value))"
        }
    }
}

/// Lets ``StructureScalar/unwrapped(_:)`` see through an `Optional` of any wrapped type held in an `Any`.
protocol StructureOptionalValue {
    var structureWrapped: Any? { get }
}

extension Optional: StructureOptionalValue {
    var structureWrapped: Any? { map { $0 as Any } }
}

/// The decoder's settings, read once per top-level `decode(_:from:)`, and the conversions from
/// structure values to Swift values, which every container shares.
final class StructureDecodingContext {
    let dateStrategy: FirebaseDataDecoder.DateDecodingStrategy
    let dataStrategy: FirebaseDataDecoder.DataDecodingStrategy
    let floatStrategy: FirebaseDataDecoder.NonConformingFloatDecodingStrategy
    let keyStrategy: FirebaseDataDecoder.KeyDecodingStrategy
    let userInfo: [CodingUserInfoKey: Any]

    /// Made on first use and kept for the rest of the run: never shared between runs, hence threads.
    private(set) lazy var iso8601Formatter: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter
    }()

    init(_ decoder: FirebaseDataDecoder) {
        dateStrategy = decoder.dateDecodingStrategy
        dataStrategy = decoder.dataDecodingStrategy
        floatStrategy = decoder.nonConformingFloatDecodingStrategy
        keyStrategy = decoder.keyDecodingStrategy
        userInfo = decoder.userInfo
    }

    // MARK: Errors

    private func mismatch(_ type: Any.Type, _ scalar: StructureScalar, at path: [any CodingKey]) -> DecodingError {
        if case .null = scalar {
            return .valueNotFound(type, .init(codingPath: path, debugDescription: "Expected \(type) value but found null instead."))
        }
        return .typeMismatch(
            type, .init(codingPath: path, debugDescription: "Expected to decode \(type) but found \(scalar.description) instead."))
    }

    private func corrupted(_ message: String, at path: [any CodingKey]) -> DecodingError {
        .dataCorrupted(.init(codingPath: path, debugDescription: message))
    }

    // MARK: Leaves

    func isNull(_ value: Any) -> Bool {
        if case .null = StructureScalar(value) { return true }
        return false
    }

    /// A boolean `NSNumber` or Swift `Bool`. Also any 0 or 1 `NSNumber` typed "c" (a C `char`), which
    /// is how Objective-C code stores `BOOL`s, though as a number it reads as an `Int8`.
    func bool(_ value: Any, at path: [any CodingKey]) throws -> Bool {
        let scalar = StructureScalar(value)
        switch scalar {
        case .bool(let bool):
            return bool
        case .signed(let int) where (int == 0 || int == 1) && StructureScalar.hasCharType(value):
            return int == 1
        default:
            throw mismatch(Bool.self, scalar, at: path)
        }
    }

    func string(_ value: Any, at path: [any CodingKey]) throws -> String {
        let scalar = StructureScalar(value)
        if case .string(let string) = scalar { return string }
        throw mismatch(String.self, scalar, at: path)
    }

    /// An integer of type `I`, only if the number is exactly one in `I`'s range.
    func integer<I: FixedWidthInteger>(_ value: Any, as type: I.Type, at path: [any CodingKey]) throws -> I {
        let scalar = StructureScalar(value)
        let converted: I?
        switch scalar {
        case .signed(let int): converted = I(exactly: int)
        case .unsigned(let uint): converted = I(exactly: uint)
        case .floating(let double): converted = I(exactly: double)  // nil for fractions, out of range, NaN
        case .decimal(let decimal): converted = I(decimal.description)  // nil for "2.5" and for digits beyond I
        default: throw mismatch(type, scalar, at: path)
        }
        guard let converted else { throw corrupted("Number \(StructureScalar.unwrapped(value)) does not fit in \(type).", at: path) }
        return converted
    }

    func double(_ value: Any, at path: [any CodingKey]) throws -> Double {
        try floatingPoint(value, as: Double.self, at: path)
    }

    /// The nearest `Float`, for finite numbers within `Float`'s range.
    func float(_ value: Any, at path: [any CodingKey]) throws -> Float {
        let double = try floatingPoint(value, as: Float.self, at: path)
        guard !double.isFinite || abs(double) <= Double(Float.greatestFiniteMagnitude) else {
            throw corrupted("Number \(StructureScalar.unwrapped(value)) does not fit in Float.", at: path)
        }
        return Float(double)
    }

    /// Any number as a `Double` (the nearest one, for integers beyond 2^53), and the non-conforming
    /// float strings when the strategy names them; `type` is the one reported in errors.
    private func floatingPoint(_ value: Any, as type: Any.Type, at path: [any CodingKey]) throws -> Double {
        let scalar = StructureScalar(value)
        switch scalar {
        case .floating(let double): return double
        case .signed(let int): return Double(int)
        case .unsigned(let uint): return Double(uint)
        case .decimal(let decimal): return NSDecimalNumber(decimal: decimal).doubleValue
        case .string(let string):
            if case .convertFromString(let positiveInfinity, let negativeInfinity, let nan) = floatStrategy {
                switch string {
                case positiveInfinity: return .infinity
                case negativeInfinity: return -.infinity
                case nan: return .nan
                default: break
                }
            }
            throw mismatch(type, scalar, at: path)
        default:
            throw mismatch(type, scalar, at: path)
        }
    }

    // MARK: Decodable values

    /// A `T` from `value` at `path`. Dates, data, URLs and decimals are caught before their own
    /// `Decodable` implementations so the strategies (and the database's forms) apply wherever they appear.
    func decodable<T: Decodable>(_ value: Any, as type: T.Type, at path: [any CodingKey]) throws -> T {
        let special: Any
        if T.self == Date.self {
            special = try date(value, at: path)
        } else if T.self == Data.self {
            special = try data(value, at: path)
        } else if T.self == URL.self {
            guard let url = URL(string: try string(value, at: path)) else { throw corrupted("Invalid URL string.", at: path) }
            special = url
        } else if T.self == Decimal.self {
            special = try decimal(value, at: path)
        } else {
            return try T(from: StructureValueDecoder(value: value, context: self, codingPath: path))
        }
        // Always succeeds: `special` was made as a `T` above.
        guard let typed = special as? T else { throw mismatch(type, StructureScalar(value), at: path) }
        return typed
    }

    private func date(_ value: Any, at path: [any CodingKey]) throws -> Date {
        switch dateStrategy {
        case .deferredToDate:
            return try Date(from: StructureValueDecoder(value: value, context: self, codingPath: path))
        case .secondsSince1970:
            return Date(timeIntervalSince1970: try double(value, at: path))
        case .millisecondsSince1970:
            return Date(timeIntervalSince1970: try double(value, at: path) / 1000)
        case .iso8601:
            guard let date = iso8601Formatter.date(from: try string(value, at: path)) else {
                throw corrupted("Expected date string to be ISO8601-formatted.", at: path)
            }
            return date
        case .formatted(let formatter):
            guard let date = formatter.date(from: try string(value, at: path)) else {
                throw corrupted("Date string does not match format expected by formatter.", at: path)
            }
            return date
        case .custom(let decode):
            return try decode(StructureValueDecoder(value: value, context: self, codingPath: path))
        }
    }

    private func data(_ value: Any, at path: [any CodingKey]) throws -> Data {
        switch dataStrategy {
        case .deferredToData:
            return try Data(from: StructureValueDecoder(value: value, context: self, codingPath: path))
        case .base64:
            guard let data = Data(base64Encoded: try string(value, at: path)) else {
                throw corrupted("Encountered Data is not valid Base64.", at: path)
            }
            return data
        case .blob:
            let unwrapped = StructureScalar.unwrapped(value)
            guard let data = unwrapped as? Data else { throw mismatch(Data.self, StructureScalar(unwrapped), at: path) }
            return data
        case .custom(let decode):
            return try decode(StructureValueDecoder(value: value, context: self, codingPath: path))
        }
    }

    /// `Decimal`'s own `Decodable` form is a keyed container of its internals, which the database never
    /// holds; numbers are what it holds, so decimals decode from them.
    private func decimal(_ value: Any, at path: [any CodingKey]) throws -> Decimal {
        let scalar = StructureScalar(value)
        switch scalar {
        case .decimal(let decimal): return decimal
        case .signed(let int): return Decimal(int)
        case .unsigned(let uint): return Decimal(uint)
        case .floating(let double):
            guard double.isFinite else { throw corrupted("Number \(double) does not fit in Decimal.", at: path) }
            // Through the shortest decimal text, so 0.1 is 0.1 rather than 0.1000000000000000055511151231257827.
            return Decimal(string: "\(double)", locale: Locale(identifier: "en_US_POSIX")) ?? Decimal(double)
        default:
            throw mismatch(Decimal.self, scalar, at: path)
        }
    }

    // MARK: Containers

    /// `value` as a dictionary with `String` keys, if it is one.
    static func dictionary(_ value: Any) -> [String: Any]? {
        if let dictionary = value as? [String: Any] { return dictionary }
        // `NSDictionary` and `[AnyHashable: Any]` land here (and in the cast above, where they bridge).
        guard let any = value as? [AnyHashable: Any] else { return nil }
        var dictionary: [String: Any] = [:]
        for (key, item) in any {
            guard let string = key.base as? String else { return nil }
            dictionary[string] = item
        }
        return dictionary
    }

    /// The entries of a keyed container at `path`, under the names the key strategy gives them.
    ///
    /// An array is accepted as the object it came from: the database returns objects keyed "0", "1", …
    /// as arrays, with nulls in the gaps, which were absent keys.
    func keyedEntries(_ raw: Any, at path: [any CodingKey]) throws -> [String: Any] {
        let value = StructureScalar.unwrapped(raw)
        var entries: [String: Any]
        if let dictionary = StructureDecodingContext.dictionary(value) {
            entries = dictionary
        } else if let array = value as? [Any] {
            entries = [:]
            for (index, item) in array.enumerated() where !isNull(item) {
                entries[String(index)] = item
            }
        } else {
            throw mismatch([String: Any].self, StructureScalar(value), at: path)
        }
        switch keyStrategy {
        case .useDefaultKeys:
            return entries
        case .convertFromSnakeCase:
            // Two keys converting to one name keep the first met, as in `JSONDecoder`.
            return Dictionary(entries.map { (StructureKeyCase.camelCased($0.key), $0.value) }, uniquingKeysWith: { first, _ in first })
        case .custom(let convert):
            return Dictionary(
                entries.map { (convert(path + [StructureCodingKey(stringValue: $0.key)]).stringValue, $0.value) },
                uniquingKeysWith: { first, _ in first })
        }
    }

    /// The elements of an unkeyed container at `path`.
    ///
    /// A dictionary whose keys are all array indices ("0", "1", …, canonical and non-negative) is
    /// accepted as an array of its values in index order, since the database returns sparse or
    /// object-written arrays that way.
    func unkeyedElements(_ raw: Any, at path: [any CodingKey]) throws -> [Any] {
        let value = StructureScalar.unwrapped(raw)
        if let array = value as? [Any] { return array }
        if let dictionary = StructureDecodingContext.dictionary(value) {
            var indexed: [(index: Int, value: Any)] = []
            indexed.reserveCapacity(dictionary.count)
            for (key, item) in dictionary {
                guard let index = Int(key), index >= 0, String(index) == key else {
                    throw DecodingError.typeMismatch(
                        [Any].self,
                        .init(codingPath: path, debugDescription: "Expected to decode an array but found a dictionary with the non-index key \"\(key)\" instead."))
                }
                indexed.append((index, item))
            }
            return indexed.sorted { $0.index < $1.index }.map(\.value)
        }
        throw mismatch([Any].self, StructureScalar(value), at: path)
    }
}

// MARK: - The decoder

/// The `Decoder` handed to `init(from:)`: it holds one value, and is that value's single-value
/// container itself.
final class StructureValueDecoder: Swift.Decoder, SingleValueDecodingContainer {
    let value: Any
    let context: StructureDecodingContext
    let codingPath: [any CodingKey]

    var userInfo: [CodingUserInfoKey: Any] { context.userInfo }

    init(value: Any, context: StructureDecodingContext, codingPath: [any CodingKey]) {
        self.value = value
        self.context = context
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(
            StructureKeyedDecodingContainer<Key>(
                context: context, codingPath: codingPath, entries: try context.keyedEntries(value, at: codingPath)))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        StructureUnkeyedDecodingContainer(
            context: context, codingPath: codingPath, elements: try context.unkeyedElements(value, at: codingPath))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { context.isNull(value) }
    func decode(_ type: Bool.Type) throws -> Bool { try context.bool(value, at: codingPath) }
    func decode(_ type: String.Type) throws -> String { try context.string(value, at: codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try context.double(value, at: codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try context.float(value, at: codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try context.integer(value, as: type, at: codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try context.integer(value, as: type, at: codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try context.integer(value, as: type, at: codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try context.integer(value, as: type, at: codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try context.integer(value, as: type, at: codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try context.integer(value, as: type, at: codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try context.integer(value, as: type, at: codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try context.integer(value, as: type, at: codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try context.integer(value, as: type, at: codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try context.integer(value, as: type, at: codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try context.decodable(value, as: type, at: codingPath) }
}

// MARK: - Containers

struct StructureKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let context: StructureDecodingContext
    let codingPath: [any CodingKey]
    /// The container's entries, under their converted names.
    let entries: [String: Any]

    var allKeys: [Key] { entries.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { entries[key.stringValue] != nil }

    /// The value for `key`, or `keyNotFound`.
    private func value(for key: Key) throws -> Any {
        guard let value = entries[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "No value associated with key \(key.stringValue.debugDescription)."))
        }
        return value
    }

    /// The value for `key` and its coding path, read with `read`.
    private func read<T>(_ key: Key, _ read: (Any, [any CodingKey]) throws -> T) throws -> T {
        try read(try value(for: key), codingPath + [key])
    }

    /// True for null and for a missing key alike: the database never stores nulls, so absent is null.
    func decodeNil(forKey key: Key) throws -> Bool {
        guard let value = entries[key.stringValue] else { return true }
        return context.isNull(value)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try read(key, context.bool) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try read(key, context.string) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try read(key, context.double) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try read(key, context.float) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try read(key) { try context.integer($0, as: type, at: $1) } }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try read(key) { try context.integer($0, as: type, at: $1) } }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try read(key) { try context.integer($0, as: type, at: $1) } }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try read(key) { try context.integer($0, as: type, at: $1) } }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try read(key) { try context.integer($0, as: type, at: $1) } }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try read(key) { try context.integer($0, as: type, at: $1) } }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try read(key) { try context.integer($0, as: type, at: $1) } }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try read(key) { try context.integer($0, as: type, at: $1) } }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try read(key) { try context.integer($0, as: type, at: $1) } }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try read(key) { try context.integer($0, as: type, at: $1) } }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try read(key) { try context.decodable($0, as: type, at: $1) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try read(key) { value, path in
            KeyedDecodingContainer(
                StructureKeyedDecodingContainer<NestedKey>(context: context, codingPath: path, entries: try context.keyedEntries(value, at: path)))
        }
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try read(key) { value, path in
            StructureUnkeyedDecodingContainer(context: context, codingPath: path, elements: try context.unkeyedElements(value, at: path))
        }
    }

    // A super-decoder for a missing key reads null, as `JSONDecoder`'s does.

    func superDecoder() throws -> any Swift.Decoder {
        StructureValueDecoder(
            value: entries[StructureCodingKey.super.stringValue] ?? NSNull(), context: context,
            codingPath: codingPath + [StructureCodingKey.super])
    }

    func superDecoder(forKey key: Key) throws -> any Swift.Decoder {
        StructureValueDecoder(value: entries[key.stringValue] ?? NSNull(), context: context, codingPath: codingPath + [key])
    }
}

struct StructureUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let context: StructureDecodingContext
    let codingPath: [any CodingKey]
    let elements: [Any]
    private(set) var currentIndex = 0

    init(context: StructureDecodingContext, codingPath: [any CodingKey], elements: [Any]) {
        self.context = context
        self.codingPath = codingPath
        self.elements = elements
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    /// The next element read with `read`; the position moves on only when that succeeds, so a caller
    /// may try another type after a failure, as with Foundation's decoders.
    private mutating func next<T>(_ type: T.Type, _ read: (Any, [any CodingKey]) throws -> T) throws -> T {
        let path = codingPath + [StructureCodingKey(index: currentIndex)]
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: path, debugDescription: "Unkeyed container is at end."))
        }
        let result = try read(elements[currentIndex], path)
        currentIndex += 1
        return result
    }

    /// True (and moves on) for a null element; false, staying put, for any other value.
    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                Any?.self,
                .init(codingPath: codingPath + [StructureCodingKey(index: currentIndex)], debugDescription: "Unkeyed container is at end."))
        }
        guard context.isNull(elements[currentIndex]) else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type, context.bool) }
    mutating func decode(_ type: String.Type) throws -> String { try next(type, context.string) }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type, context.double) }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type, context.float) }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { [context] in try context.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { [context] in try context.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { [context] in try context.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { [context] in try context.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { [context] in try context.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { [context] in try context.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { [context] in try context.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { [context] in try context.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { [context] in try context.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { [context] in try context.integer($0, as: type, at: $1) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try next(type) { [context] in try context.decodable($0, as: type, at: $1) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next(KeyedDecodingContainer<NestedKey>.self) { [context] value, path in
            KeyedDecodingContainer(
                StructureKeyedDecodingContainer<NestedKey>(context: context, codingPath: path, entries: try context.keyedEntries(value, at: path)))
        }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next((any UnkeyedDecodingContainer).self) { [context] value, path in
            StructureUnkeyedDecodingContainer(context: context, codingPath: path, elements: try context.unkeyedElements(value, at: path))
        }
    }

    mutating func superDecoder() throws -> any Swift.Decoder {
        try next((any Swift.Decoder).self) { [context] value, path in
            StructureValueDecoder(value: value, context: context, codingPath: path)
        }
    }
}
