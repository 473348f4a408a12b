import Foundation
import HearthCrypto
import Testing

/// The keys identity providers sign with, as a JWK describes them: RSA from `n` and `e`, P-256 from
/// `x` and `y`, and ES256's `r || s` signatures.
@Suite struct ProviderKeyTests {
    @Test func anRSAKeyRebuiltFromItsModulusAndExponentVerifiesWhatTheOriginalSigned() throws {
        let original = try RSAPrivateKey.generate(bits: 2048)
        let rebuilt = try RSAPublicKey(modulus: original.publicKey.modulus, exponent: original.publicKey.exponent)
        let message = Array("header.payload".utf8)
        let signature = try original.signRS256(message)
        #expect(rebuilt.verifyRS256(message, signature: signature))
        #expect(!rebuilt.verifyRS256(Array("header.other".utf8), signature: signature))
        // A leading zero byte (as some JWKs carry) does not change the key.
        #expect(try RSAPublicKey(modulus: [0] + original.publicKey.modulus, exponent: original.publicKey.exponent)
            .verifyRS256(message, signature: signature))
    }

    @Test func shortOrMalformedRSAParametersAreRefused() throws {
        let short = try RSAPrivateKey.generate(bits: 1024)
        #expect(throws: CryptoError.self) { try RSAPublicKey(modulus: short.publicKey.modulus, exponent: short.publicKey.exponent) }
        #expect(throws: CryptoError.self) { try RSAPublicKey(modulus: [UInt8](repeating: 0xFF, count: 256), exponent: []) }
    }

    @Test func es256SignaturesVerifyAsJWSCarriesThem() throws {
        let key = try ECPrivateKey.generate()
        let (x, y) = key.coordinates
        #expect(x.count == 32 && y.count == 32)
        let verifier = try ECPublicKey(x: x, y: y)
        let message = Array("header.payload".utf8)
        let signature = try key.signES256(message)
        #expect(signature.count == 64)
        #expect(verifier.verifyES256(message, signature: signature))
        var flipped = signature
        flipped[10] ^= 1
        #expect(!verifier.verifyES256(message, signature: flipped))
        #expect(!verifier.verifyES256(message, signature: Array(signature.prefix(63))))
        #expect(!verifier.verifyES256(message, signature: []))
    }

    @Test func aPointOffTheCurveIsNotAKey() throws {
        let (x, y) = try ECPrivateKey.generate().coordinates
        var bent = y
        bent[31] ^= 1
        #expect(throws: CryptoError.self) { try ECPublicKey(x: x, y: bent) }
        #expect(throws: CryptoError.self) { try ECPublicKey(x: Array(x.prefix(31)), y: y) }
    }
}

@Test func rsaExponentsThatMakeSignaturesForgeableAreRefused() throws {
    let modulus = try RSAPrivateKey.generate(bits: 2048).publicKey.modulus
    for exponent: [UInt8] in [[1], [0, 1], [2], [0x01, 0x00]] {
        #expect(throws: CryptoError.self) { try RSAPublicKey(modulus: modulus, exponent: exponent) }
    }
    #expect(throws: Never.self) { try RSAPublicKey(modulus: modulus, exponent: [3]) }
}
