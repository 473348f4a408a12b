import HearthCore

/// The fields of a wire message's JSON objects, read without building nodes: an envelope's `t` and `d`,
/// a request's `r`, `a` and `b`, a body's `p`, `d`, `q`… (each field's value as its raw JSON bytes).
public enum WireFields {
    /// The top-level fields of a JSON object, or nil when `bytes` is not one.
    public static func of(_ bytes: [UInt8]) -> [String: [UInt8]]? {
        guard let entries = JSONObjectSplitter.split(bytes) else { return nil }
        var fields: [String: [UInt8]] = [:]
        fields.reserveCapacity(entries.count)
        for (key, value) in entries { fields[key] = Array(value) }
        return fields
    }

    /// A JSON string's value.
    public static func string(_ bytes: [UInt8]) -> String? { JSONPlainScalar.string(bytes) }

    /// A JSON integer's value (written plainly, or in any form the JSON parser reads as an integer).
    public static func integer(_ bytes: [UInt8]) -> Int64? {
        if let plain = JSONPlainScalar.plainInteger(bytes) { return plain }
        guard case .integer(let number)? = (try? Node(jsonBytes: bytes))?.leafValue else { return nil }
        return number
    }
}
