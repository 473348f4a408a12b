/// Which names a namespace (one database) may have: a Firebase database name, which must fit in a DNS
/// label (letters, digits, hyphens, and underscores for the emulator's project ids), and which every
/// engine can use as a file or schema name. Anything else (a slash, a dot) could reach outside the data
/// directory. The server refuses other names before any engine sees them; engines check again.
public enum NamespaceName {
    /// 63 characters: the longest DNS label.
    public static let lengthMax = 63

    /// Names whose files the server keeps for itself beside the namespaces': `auth` is the accounts
    /// database (`auth.sqlite`) and `hooks` the webhooks' and functions' (`hooks.sqlite`), which a
    /// namespace of that name would open as its own (and which the namespace list would show as one).
    public static let reserved: Set<String> = ["auth", "hooks"]

    public static func isValid(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= lengthMax, name.first != "-", !reserved.contains(name.lowercased()) else {
            return false
        }
        return name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }

    /// What to tell someone who used an invalid name.
    public static func invalidMessage(_ name: String) -> String {
        if reserved.contains(name.lowercased()) { return "'\(name)' is reserved for the server's own files: choose another namespace name." }
        return "'\(name.prefix(80))' is not a valid namespace name: use 1–63 letters, digits or hyphens (like a Firebase database name)."
    }
}
