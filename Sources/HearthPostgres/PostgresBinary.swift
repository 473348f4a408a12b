/// PostgreSQL's binary format for the few types Hearth sends and reads (what the server's `*send` and
/// `*recv` functions write and read: network byte order, no text parsing). Every decoder checks the
/// length it is given and returns nil rather than trapping: the bytes come from outside the process.
///
///     PostgresBinary.int64(42)                       // [0, 0, 0, 0, 0, 0, 0, 42]
///     PostgresBinary.decodeInt64(bytes)               // nil unless exactly 8 bytes
enum PostgresBinary {
    /// The type OIDs Hearth binds (pg_type.oid; fixed for built-in types).
    enum TypeID: UInt32 {
        case boolean = 16
        case bytea = 17
        case int8 = 20
        case int4 = 23
        case text = 25
        case float8 = 701
        case booleanArray = 1000
        case byteaArray = 1001
        case int8Array = 1016
        case textArray = 1009
        case float8Array = 1022
    }

    static func int64(_ value: Int64) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    static func double(_ value: Double) -> [UInt8] { int64(Int64(bitPattern: value.bitPattern)) }

    static func boolean(_ value: Bool) -> [UInt8] { [value ? 1 : 0] }

    static func decodeInt64(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard bytes.count == 8 else { return nil }
        var value: UInt64 = 0
        for byte in bytes { value = value << 8 | UInt64(byte) }
        return Int64(bitPattern: value)
    }

    static func decodeInt32(_ bytes: UnsafeBufferPointer<UInt8>) -> Int32? {
        guard bytes.count == 4 else { return nil }
        var value: UInt32 = 0
        for byte in bytes { value = value << 8 | UInt32(byte) }
        return Int32(bitPattern: value)
    }

    static func decodeDouble(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        decodeInt64(bytes).map { Double(bitPattern: UInt64(bitPattern: $0)) }
    }

    static func decodeBoolean(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool? {
        guard bytes.count == 1, bytes[0] <= 1 else { return nil }
        return bytes[0] == 1
    }

    /// UTF-8 text, validated (never repaired: a repaired string would be stored back changed).
    static func decodeString(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        String(validating: bytes, as: UTF8.self)
    }

    /// A one-dimensional array in `array_send`'s format: the number of dimensions, a has-nulls flag,
    /// the element type, then per dimension its length and lower bound (1), then each element as a
    /// 4-byte length (-1 for NULL) and its bytes. The header is reserved first and filled in by
    /// ``finish()``, so elements are written once.
    struct ArrayEncoder {
        private var bytes: [UInt8]
        private var count: Int32 = 0
        private var hasNulls = false
        private let element: TypeID
        private static let headerByteCount = 20

        init(of element: TypeID, reservingByteCount: Int = 0) {
            self.element = element
            bytes = [UInt8](repeating: 0, count: Self.headerByteCount)
            bytes.reserveCapacity(Self.headerByteCount + reservingByteCount)
        }

        mutating func appendNull() {
            append32(-1)
            hasNulls = true
            count += 1
        }

        mutating func append(_ element: some Collection<UInt8>) {
            append32(Int32(element.count))
            bytes.append(contentsOf: element)
            count += 1
        }

        mutating func append(_ value: Int64) { append(PostgresBinary.int64(value)) }
        mutating func append(_ value: Double) { append(PostgresBinary.double(value)) }
        mutating func append(_ value: Bool) { append(PostgresBinary.boolean(value)) }

        private mutating func append32(_ value: Int32) {
            withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
        }

        /// The array's bytes. An empty array has no dimensions (as `array_send` writes it).
        consuming func finish() -> [UInt8] {
            var header: [UInt8] = []
            for field in [count == 0 ? 0 : 1, hasNulls ? 1 : 0, Int32(bitPattern: element.rawValue), count, 1] as [Int32] {
                withUnsafeBytes(of: field.bigEndian) { header.append(contentsOf: $0) }
            }
            if count == 0 { return Array(header[0..<12]) }
            bytes.replaceSubrange(0..<Self.headerByteCount, with: header)
            return bytes
        }
    }
}
