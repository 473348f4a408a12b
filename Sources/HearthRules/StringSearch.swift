import HearthCore

/// Substring search and replacement on UTF-8 bytes (which finds exactly the scalar-level matches),
/// for `contains()` and `replace()`: Swift's `String` operations compare by grapheme clusters and
/// canonical equivalence, which Firebase's Java strings do not.
enum StringSearch {
    static func contains(_ haystack: String, _ needle: String) -> Bool {
        firstMatch(Array(haystack.utf8), Array(needle.utf8), from: 0) != nil
    }

    /// Replaces every occurrence of `pattern` (rules.md §6.4). An empty pattern inserts the
    /// replacement between characters and at both ends, as Java's `String.replace` does.
    static func replacingAll(in string: String, _ pattern: String, with replacement: String) -> String {
        if pattern.isEmpty {
            var result = replacement
            for scalar in string.unicodeScalars {
                result.unicodeScalars.append(scalar)
                result += replacement
            }
            return result
        }
        let bytes = Array(string.utf8), needle = Array(pattern.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var position = 0
        while let match = firstMatch(bytes, needle, from: position) {
            output.append(contentsOf: bytes[position..<match])
            output.append(contentsOf: replacement.utf8)
            position = match + needle.count
        }
        output.append(contentsOf: bytes[position...])
        return String(decoding: output, as: UTF8.self)
    }

    private static func firstMatch(_ bytes: [UInt8], _ needle: [UInt8], from start: Int) -> Int? {
        if needle.isEmpty { return start }
        guard bytes.count >= needle.count else { return nil }
        var i = start
        while i + needle.count <= bytes.count {
            if bytes[i] == needle[0] {
                var j = 1
                while j < needle.count && bytes[i + j] == needle[j] { j += 1 }
                if j == needle.count { return i }
            }
            i += 1
        }
        return nil
    }
}

/// String order for `<` and friends: UTF-16 code units, as JavaScript and Java compare.
enum KeyOrderUTF16 {
    static func compare(_ a: String, _ b: String) -> Int { KeyOrder.compareUTF16(a, b) }
}
