import Foundation

/// Base64 in the URL-safe alphabet without padding (JWT segments, JWK numbers, refresh tokens), plus a
/// decoder that accepts either alphabet, padded or not (Firebase exports use standard base64,
/// firebase-admin sends URL-safe).
public enum Base64URL {
    public static func encode(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    public static func decode<S: StringProtocol>(_ text: S) -> [UInt8]? {
        var standard = String(text).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let remainder = standard.utf8.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { standard += String(repeating: "=", count: 4 - remainder) }
        guard let data = Data(base64Encoded: standard) else { return nil }
        return [UInt8](data)
    }

    /// Standard base64 with padding (what Firebase's `auth:export` writes).
    public static func encodeStandard(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
}
