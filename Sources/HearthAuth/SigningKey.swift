import Foundation
public import HearthCrypto

/// The RS256 key that signs Hearth's ID tokens: generated on first start and kept in
/// `<data>/auth-signing-key.pem` (mode 0600), published as a JWKS so other backends can verify tokens.
public struct SigningKey: Sendable {
    public let privateKey: RSAPrivateKey
    public let publicKey: RSAPublicKey
    /// The JWT `kid`: the first 16 bytes of SHA-256 over the modulus, base64url.
    public let keyID: String

    public init(privateKey: RSAPrivateKey) {
        self.privateKey = privateKey
        publicKey = privateKey.publicKey
        keyID = Base64URL.encode(Array(SHA256.hash(publicKey.modulus).prefix(16)))
    }

    public static func file(in directory: String) -> String {
        (directory.hasSuffix("/") ? directory : directory + "/") + "auth-signing-key.pem"
    }

    /// Reads the key from the data directory, generating and saving it on first start.
    public static func loadOrCreate(in directory: String) throws -> SigningKey {
        let path = file(in: directory)
        if let data = FileManager.default.contents(atPath: path) {
            return SigningKey(privateKey: try RSAPrivateKey(pem: String(decoding: data, as: UTF8.self)))
        }
        let key = try RSAPrivateKey.generate(bits: 2048)
        guard FileManager.default.createFile(
            atPath: path, contents: Data(try key.pemRepresentation().utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw CryptoError("saving the signing key to \(path)")
        }
        return SigningKey(privateKey: key)
    }

    /// The public key as a JSON Web Key Set (RFC 7517), the format of Google's securetoken JWKS.
    public var jwksJSON: String {
        let key: [String: String] = [
            "kty": "RSA", "alg": "RS256", "use": "sig", "kid": keyID,
            "n": Base64URL.encode(publicKey.modulus), "e": Base64URL.encode(publicKey.exponent),
        ]
        return JSONText.encode(["keys": [key]])
    }
}

/// JSON text from Foundation values, without escaped slashes and with sorted keys (stable output).
enum JSONText {
    static func encode(_ value: Any) -> String {
        guard JSONSerialization.isValidJSONObject(value),
            let data = try? JSONSerialization.data(withJSONObject: value, options: [.withoutEscapingSlashes, .sortedKeys])
        else { preconditionFailure("not JSON: \(type(of: value))") }
        return String(decoding: data, as: UTF8.self)
    }

    static func bytes(_ value: Any) -> [UInt8] { Array(encode(value).utf8) }

    /// The object in `text`, or nil when it is not a JSON object.
    static func object(_ bytes: [UInt8]) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) as? [String: Any]
    }
}
