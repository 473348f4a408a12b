import HearthCore

/// Splits a JSON object's top level into keys and raw value bytes without building nodes, so a
/// multi-path PATCH keeps its `null` values (deletions), which the tree parser drops.
public enum JSONObjectSplitter {
    public static func split(_ bytes: [UInt8]) -> [(key: String, value: ArraySlice<UInt8>)]? {
        var index = 0
        func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D {
                index += 1
            }
        }
        func skipString() -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return false }
            index += 1
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "\\") { index += 2; continue }
                if bytes[index] == UInt8(ascii: "\"") { index += 1; return true }
                index += 1
            }
            return false
        }
        func skipValue() -> Bool {
            skipSpace()
            guard index < bytes.count else { return false }
            var depth = 0
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    guard skipString() else { return false }
                    if depth == 0 { return true }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if depth == 0 { return true }
                    depth -= 1
                    if depth == 0 { index += 1; return true }
                case UInt8(ascii: ","):
                    if depth == 0 { return true }
                default: break
                }
                index += 1
            }
            return depth == 0
        }
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        var entries: [(key: String, value: ArraySlice<UInt8>)] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            skipSpace()
            return index == bytes.count ? [] : nil
        }
        while true {
            skipSpace()
            let keyStart = index
            guard skipString(), let key = JSONPlainScalar.string(bytes[keyStart..<index]) else { return nil }
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            skipSpace()
            let valueStart = index
            guard skipValue() else { return nil }
            entries.append((key, bytes[valueStart..<index]))
            skipSpace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            guard bytes[index] == UInt8(ascii: "}") else { return nil }
            index += 1
            skipSpace()
            return index == bytes.count ? entries : nil
        }
    }
}
