import Foundation
public import HearthCrypto

/// The RS256 key that signs Hearth's ID tokens: generated on first start and kept in
/// `<data>/auth-signing-key.pem` (mode 0600), or in PostgreSQL for a cluster (every node signs with the
/// same key, so any node verifies any node's tokens); published as a JWKS so other backends can verify
/// tokens.
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

    /// The key in a PEM text (PKCS#8, or a traditional RSA key), as ``pemRepresentation()`` writes it.
    public init(pem: String) throws {
        self.init(privateKey: try RSAPrivateKey(pem: pem))
    }

    /// A new RSA-2048 key.
    public static func generate() throws -> SigningKey {
        SigningKey(privateKey: try RSAPrivateKey.generate(bits: 2048))
    }

    /// The private key as unencrypted PKCS#8 PEM: whoever reads it can sign tokens for any user, so it is
    /// kept owner-only (the file is 0600; in PostgreSQL, grant the table to hearth's role alone).
    public func pemRepresentation() throws -> String { try privateKey.pemRepresentation() }

    public static func file(in directory: String) -> String {
        (directory.hasSuffix("/") ? directory : directory + "/") + "auth-signing-key.pem"
    }

    /// Reads the key from the data directory, generating and saving it on first start.
    public static func loadOrCreate(in directory: String) throws -> SigningKey {
        let path = file(in: directory)
        if let data = FileManager.default.contents(atPath: path) {
            return try SigningKey(pem: String(decoding: data, as: UTF8.self))
        }
        let key = try generate()
        guard FileManager.default.createFile(
            atPath: path, contents: Data(try key.pemRepresentation().utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw CryptoError("saving the signing key to \(path)")
        }
        return key
    }

    /// The public key as a JSON Web Key Set (RFC 7517), the format of Google's securetoken JWKS.
    public var jwksJSON: String {
        let key: [String: String] = [
            "kty": "RSA", "alg": "RS256", "use": "sig", "kid": keyID,
            "n": Base64URL.encode(publicKey.modulus), "e": Base64URL.encode(publicKey.exponent),
        ]
        return JSONText.encode(["keys": [key]], sorted: true)
    }
}

/// JSON text from the values HearthAuth builds (String, Bool, Int, Int64, Double, arrays, dictionaries)
/// and those JSONSerialization parses (NSNumber, NSNull). Hand-written: Foundation's writer on Linux took
/// about three quarters of a token refresh's CPU time.
enum JSONText {
    static func encode(_ value: Any, sorted: Bool = false) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(512)
        write(value, to: &output, sorted: sorted)
        return String(decoding: output, as: UTF8.self)
    }

    private static func write(_ value: Any, to output: inout [UInt8], sorted: Bool) {
        // Exact native types first: a failed `as?` to a bridged type (NSNumber, arrays) is expensive.
        let valueType = type(of: value)
        if valueType == String.self { return writeString(value as! String, to: &output) }
        if valueType == Int.self { return output.append(contentsOf: String(value as! Int).utf8) }
        if valueType == Int64.self { return output.append(contentsOf: String(value as! Int64).utf8) }
        if valueType == Bool.self { return output.append(contentsOf: (value as! Bool) ? Array("true".utf8) : Array("false".utf8)) }
        if valueType == [String: Any].self { return writeObject(value as! [String: Any], to: &output, sorted: sorted) }
        if valueType == [String].self { return writeArray((value as! [String]).map { $0 as Any }, to: &output, sorted: sorted) }
        switch value {
        case let text as String:
            writeString(text, to: &output)
        case let flag as Bool where type(of: value) == Bool.self:
            output.append(contentsOf: flag ? Array("true".utf8) : Array("false".utf8))
        case let number as Int where type(of: value) == Int.self:
            output.append(contentsOf: String(number).utf8)
        case let number as Int64 where type(of: value) == Int64.self:
            output.append(contentsOf: String(number).utf8)
        case let number as Double where type(of: value) == Double.self:
            writeDouble(number, to: &output)
        case let number as NSNumber:
            // JSONSerialization makes booleans with NSNumber(value: Bool), whose type encoding is "c".
            switch String(cString: number.objCType) {
            case "c", "B": output.append(contentsOf: number.boolValue ? Array("true".utf8) : Array("false".utf8))
            case "f", "d": writeDouble(number.doubleValue, to: &output)
            default: output.append(contentsOf: number.stringValue.utf8)
            }
        case let object as [String: Any]:
            writeObject(object, to: &output, sorted: sorted)
        case let array as [Any]:
            writeArray(array, to: &output, sorted: sorted)
        default:
            output.append(contentsOf: "null".utf8)  // NSNull, or a value JSON cannot carry
        }
    }

    private static func writeArray(_ array: [Any], to output: inout [UInt8], sorted: Bool) {
        output.append(UInt8(ascii: "["))
        for (index, item) in array.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            write(item, to: &output, sorted: sorted)
        }
        output.append(UInt8(ascii: "]"))
    }

    private static func writeObject(_ object: [String: Any], to output: inout [UInt8], sorted: Bool) {
        output.append(UInt8(ascii: "{"))
        var first = true
        func member(_ key: String, _ item: Any) {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            writeString(key, to: &output)
            output.append(UInt8(ascii: ":"))
            write(item, to: &output, sorted: sorted)
        }
        if sorted {
            for key in object.keys.sorted() { member(key, object[key]!) }
        } else {
            for (key, item) in object { member(key, item) }
        }
        output.append(UInt8(ascii: "}"))
    }

    private static func writeDouble(_ number: Double, to output: inout [UInt8]) {
        guard number.isFinite else {
            output.append(contentsOf: "null".utf8)
            return
        }
        if number == number.rounded(), abs(number) < 1e15 {
            output.append(contentsOf: String(Int64(number)).utf8)
        } else {
            output.append(contentsOf: "\(number)".utf8)
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    private static func writeString(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                output.append(contentsOf: Array("\\u00".utf8))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 15)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    static func bytes(_ value: Any) -> [UInt8] { Array(encode(value).utf8) }

    /// The object in `text`, or nil when it is not a JSON object.
    static func object(_ bytes: [UInt8]) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) as? [String: Any]
    }
}
