import HearthCore

/// Substring search and replacement on UTF-8 bytes (which finds exactly the scalar-level matches),
/// for `contains()` and `replace()`: Swift's `String` operations compare by grapheme clusters and
/// canonical equivalence, which Firebase's Java strings do not.
enum StringSearch {
    static func contains(_ haystack: String, _ needle: String) -> Bool {
        firstMatch(Array(haystack.utf8), Array(needle.utf8), from: 0) != nil
    }

    /// Replaces every occurrence of `pattern` (docs/rules.md §6.4). An empty pattern inserts the
    /// replacement between characters and at both ends, as Java's `String.replace` does. Nil when the
    /// result would be longer than `bytesMax` UTF-8 bytes.
    static func replacingAll(in string: String, _ pattern: String, with replacement: String, bytesMax: Int) -> String? {
        let insert = Array(replacement.utf8)
        if pattern.isEmpty {
            let scalars = string.unicodeScalars.count
            guard string.utf8.count + (scalars + 1) * insert.count <= bytesMax else { return nil }
            var result = replacement
            for scalar in string.unicodeScalars {
                result.unicodeScalars.append(scalar)
                result += replacement
            }
            return result
        }
        let bytes = Array(string.utf8), needle = Array(pattern.utf8)
        let table = failureTable(needle)
        var output: [UInt8] = []
        output.reserveCapacity(min(bytes.count, bytesMax))
        var position = 0
        while let match = firstMatch(bytes, needle, from: position, table: table) {
            output.append(contentsOf: bytes[position..<match])
            output.append(contentsOf: insert)
            if output.count > bytesMax { return nil }
            position = match + needle.count
        }
        output.append(contentsOf: bytes[position...])
        return output.count <= bytesMax ? String(decoding: output, as: UTF8.self) : nil
    }

    /// Knuth–Morris–Pratt: for each prefix of `needle`, the length of its longest proper prefix that is
    /// also its suffix. Searching with it takes time linear in both strings (a naive search of a
    /// 10 MiB string for a long, nearly matching needle took minutes).
    private static func failureTable(_ needle: [UInt8]) -> [Int] {
        var table = [Int](repeating: 0, count: needle.count)
        var length = 0
        var i = 1
        while i < needle.count {
            if needle[i] == needle[length] {
                length += 1
                table[i] = length
                i += 1
            } else if length > 0 {
                length = table[length - 1]
            } else {
                i += 1
            }
        }
        return table
    }

    private static func firstMatch(_ bytes: [UInt8], _ needle: [UInt8], from start: Int, table: [Int]? = nil) -> Int? {
        if needle.isEmpty { return start }
        guard bytes.count - start >= needle.count else { return nil }
        let table = table ?? failureTable(needle)
        var matched = 0
        var i = start
        while i < bytes.count {
            if bytes[i] == needle[matched] {
                matched += 1
                i += 1
                if matched == needle.count { return i - matched }
            } else if matched > 0 {
                matched = table[matched - 1]
            } else {
                i += 1
            }
        }
        return nil
    }
}

/// String order for `<` and friends: UTF-16 code units, as JavaScript and Java compare.
enum KeyOrderUTF16 {
    static func compare(_ a: String, _ b: String) -> Int { KeyOrder.compareUTF16(a, b) }
}
