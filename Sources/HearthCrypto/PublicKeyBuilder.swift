internal import COpenSSL
import Foundation

/// Makes an OpenSSL public key from its parameters (`EVP_PKEY_fromdata`), as a JWK gives them.
///
/// OpenSSL's parameter builder keeps *pointers* to what it is given (names, strings, buffers, bignums)
/// until the parameters are used, so everything here is copied into memory this type owns and frees
/// only after the key is made: Swift's temporary C strings and array buffers would be gone by then.
enum PublicKeyBuilder {
    enum Parameter {
        case bignum(String, [UInt8])
        case utf8(String, String)
        case octets(String, [UInt8])
    }

    /// `type` is OpenSSL's key type name (`RSA`, `EC`). Nil when the parameters do not make a key.
    static func build(type: String, _ parameters: [Parameter]) -> OpaquePointer? {
        var owned: [UnsafeMutableRawPointer] = []
        var bignums: [OpaquePointer] = []
        defer {
            for pointer in owned { free(pointer) }
            for number in bignums { BN_free(number) }
        }
        func copy(_ text: String) -> UnsafeMutablePointer<CChar> {
            let pointer = strdup(text)!
            owned.append(pointer)
            return pointer
        }
        guard let builder = OSSL_PARAM_BLD_new() else { return nil }
        defer { OSSL_PARAM_BLD_free(builder) }
        for parameter in parameters {
            let pushed: Int32
            switch parameter {
            case .bignum(let name, let bytes):
                guard let number = bytes.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, Int32($0.count), nil) }) else { return nil }
                bignums.append(number)
                pushed = OSSL_PARAM_BLD_push_BN(builder, copy(name), number)
            case .utf8(let name, let value):
                pushed = OSSL_PARAM_BLD_push_utf8_string(builder, copy(name), copy(value), 0)
            case .octets(let name, let bytes):
                let buffer = malloc(max(bytes.count, 1))!
                owned.append(buffer)
                bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
                pushed = OSSL_PARAM_BLD_push_octet_string(builder, copy(name), buffer, bytes.count)
            }
            guard pushed == 1 else { return nil }
        }
        guard let params = OSSL_PARAM_BLD_to_param(builder) else { return nil }
        defer { OSSL_PARAM_free(params) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1, EVP_PKEY_fromdata(context, &key, COpenSSL_public_key_selection(), params) == 1
        else { return nil }
        return key
    }
}
