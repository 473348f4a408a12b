import Foundation
import HearthCrypto
import HearthProtocol

/// One key an identity provider signs its ID tokens with. A key verifies only the algorithm of its type
/// (RSA keys RS256, P-256 keys ES256), so a token cannot choose how its signature is checked: HS256
/// "signed" with a public key, or `none`, never reaches a key.
enum ProviderKey: Sendable {
    case rsa(RSAPublicKey)
    case p256(ECPublicKey)

    var algorithm: String {
        switch self {
        case .rsa: "RS256"
        case .p256: "ES256"
        }
    }

    func verify(algorithm: String, message: [UInt8], signature: [UInt8]) -> Bool {
        guard algorithm == self.algorithm else { return false }
        switch self {
        case .rsa(let key): return key.verifyRS256(message, signature: signature)
        case .p256(let key): return key.verifyES256(message, signature: signature)
        }
    }
}

/// A provider's published keys (RFC 7517 `{"keys": [...]}`), by `kid`. Keys this server cannot use
/// (other types or curves, encryption keys, RSA under 2048 bits, malformed members) are skipped, not
/// fatal: providers publish keys for other clients too.
struct JSONWebKeySet: Sendable {
    var keys: [String: ProviderKey]

    /// Why a document is not a key set at all.
    struct Unreadable: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    init(keys: [String: ProviderKey]) { self.keys = keys }

    init(json bytes: [UInt8]) throws(Unreadable) {
        guard let document = JSONText.object(bytes), let entries = document["keys"] as? [Any] else {
            throw Unreadable(description: "not a JSON Web Key Set (an object with a \"keys\" array)")
        }
        var keys: [String: ProviderKey] = [:]
        for entry in entries.prefix(ServerLimits.providerKeysPerSetMax) {
            guard let fields = entry as? [String: Any], let kid = Claims.string(fields["kid"]), !kid.isEmpty, kid.utf8.count <= 256,
                let key = Self.key(fields)
            else { continue }
            keys[kid] = key
        }
        guard !keys.isEmpty else { throw Unreadable(description: "no usable signing key (RSA of 2048 bits or more, or P-256, each with a kid)") }
        self.keys = keys
    }

    /// The key a JWK describes, if it is one this server verifies with.
    static func key(_ fields: [String: Any]) -> ProviderKey? {
        if let use = fields["use"] { guard Claims.string(use) == "sig" else { return nil } }
        let declared = Claims.string(fields["alg"])
        switch Claims.string(fields["kty"]) {
        case "RSA":
            guard declared == nil || declared == "RS256",
                let n = Claims.string(fields["n"]).flatMap(Base64URL.decode), let e = Claims.string(fields["e"]).flatMap(Base64URL.decode),
                let key = try? RSAPublicKey(modulus: n, exponent: e)
            else { return nil }
            return .rsa(key)
        case "EC":
            guard declared == nil || declared == "ES256", Claims.string(fields["crv"]) == "P-256",
                let x = Claims.string(fields["x"]).flatMap(Base64URL.decode), let y = Claims.string(fields["y"]).flatMap(Base64URL.decode),
                let key = try? ECPublicKey(x: x, y: y)
            else { return nil }
            return .p256(key)
        default:
            return nil
        }
    }
}

/// Checked reads of JSON values as JSONSerialization gives them (NSNumber for numbers and booleans).
enum Claims {
    static func string(_ value: Any?) -> String? { value as? String }

    /// A JSON boolean, or the strings `"true"`/`"false"` (Apple sends `email_verified` as a string).
    /// A number is not a boolean here: NSNumber(1) would otherwise pass for `true`.
    static func bool(_ value: Any?) -> Bool? {
        if let text = value as? String { return text == "true" ? true : text == "false" ? false : nil }
        guard let number = value as? NSNumber, isBoolean(number) else { return nil }
        return number.boolValue
    }

    /// Whole seconds (a NumericDate), within ±2^53; nil for anything else.
    static func seconds(_ value: Any?) -> Int64? {
        guard let number = value as? NSNumber, !isBoolean(number) else { return nil }
        let double = number.doubleValue
        guard double.isFinite, double.rounded() == double, abs(double) <= 9_007_199_254_740_992 else { return nil }
        return Int64(double)
    }

    /// A string, or a whole number written as its digits (GitHub's and Facebook's ids are numbers).
    static func identifier(_ value: Any?) -> String? {
        if let text = value as? String { return text }
        return seconds(value).map(String.init)
    }

    private static func isBoolean(_ number: NSNumber) -> Bool {
        // One byte, read in place: a String of it cost a measurable share of auth.idp's token check.
        let type = number.objCType
        return type[1] == 0 && (type[0] == CChar(UInt8(ascii: "c")) || type[0] == CChar(UInt8(ascii: "B")))
    }
}
