/// Comparison whose time depends only on the lengths, not on where the bytes differ: for secrets a
/// caller presents (the admin token, a long-poll session's password, a password hash), so that timing
/// does not reveal how much of a guess was right.
public enum ConstantTime {
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    public static func equal(_ a: String, _ b: String) -> Bool { equal(Array(a.utf8), Array(b.utf8)) }
}
