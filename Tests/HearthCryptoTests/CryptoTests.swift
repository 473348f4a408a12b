import Foundation
import HearthCrypto
import Testing

@Test func sha256MatchesTheFIPSVector() {
    let digest = SHA256.hash("abc")
    #expect(digest.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
}

@Test func base64URLRoundTripsAndAcceptsBothAlphabets() {
    let bytes: [UInt8] = [0xfb, 0xff, 0xfe, 0x00, 0x10]
    #expect(Base64URL.encode(bytes) == "-__-ABA")
    #expect(Base64URL.decode("-__-ABA") == bytes)
    #expect(Base64URL.decode("+//+ABA=") == bytes)
    #expect(Base64URL.decode("a") == nil)
}

@Test func argon2idVerifiesOnlyTheRightPassword() throws {
    let hasher = Argon2id.testing
    let stored = try hasher.hash("correct horse")
    #expect(stored.hasPrefix("$argon2id$v=19$m=64,t=1,p=1$"))
    #expect(Argon2id.verify("correct horse", against: stored))
    #expect(!Argon2id.verify("correct horsE", against: stored))
    #expect(!Argon2id.verify("correct horse", against: "not a hash"))
    #expect(try hasher.hash("correct horse") != stored)  // fresh salt
    #expect(!hasher.needsRehash(stored))
    #expect(Argon2id.hearthDefault.needsRehash(stored))
}

@Test func randomBytesDiffer() {
    #expect(SecureRandom.bytes(32).count == 32)
    #expect(SecureRandom.bytes(32) != SecureRandom.bytes(32))
    let text = SecureRandom.string(28, alphabet: Array("ab"))
    #expect(text.count == 28 && text.allSatisfy { $0 == "a" || $0 == "b" })
}

@Test func rs256SignsVerifiesAndSurvivesPEM() throws {
    let key = try RSAPrivateKey.generate(bits: 2048)
    let message = Array("header.payload".utf8)
    let signature = try key.signRS256(message)
    #expect(signature.count == 256)
    #expect(key.publicKey.verifyRS256(message, signature: signature))
    #expect(!key.publicKey.verifyRS256(Array("header.payloaD".utf8), signature: signature))
    var tampered = signature
    tampered[10] ^= 1
    #expect(!key.publicKey.verifyRS256(message, signature: tampered))

    let reloaded = try RSAPrivateKey(pem: try key.pemRepresentation())
    #expect(try reloaded.pemRepresentation() == key.pemRepresentation())
    #expect(reloaded.publicKey.verifyRS256(message, signature: signature))
    #expect(key.publicKey.exponent == [1, 0, 1])
    #expect(key.publicKey.modulus.count == 256)
    let publicPEM = try key.publicKey.pemRepresentation()
    #expect(publicPEM.hasPrefix("-----BEGIN PUBLIC KEY-----"))
    #expect(try RSAPublicKey(pem: publicPEM).verifyRS256(message, signature: signature))
    #expect(throws: CryptoError.self) { try RSAPrivateKey(pem: "garbage") }
}

/// RFC 7914 §12, second vector: scrypt("password", "NaCl", N=1024, r=8, p=16, 64).
@Test func scryptMatchesRFC7914() throws {
    let derived = try FirebaseScrypt.scrypt(
        password: Array("password".utf8), salt: Array("NaCl".utf8), n: 1024, r: 8, p: 16, length: 64)
    #expect(Base64URL.encodeStandard(derived)
        == "/bq+HJ00cgB4VucZDQHp/nxq18vII3gw53N2Y0s3MWIurzDZLiKjiG/xCSedmDDaxyevuUqD7m2DYMvfoswGQA==")
}

/// The known-answer vectors of Firebase's scrypt fork (docs/auth.md §7.2).
@Test func firebaseScryptMatchesTheKnownAnswers() throws {
    let parameters = FirebaseScrypt(
        signerKey: Base64URL.decode("jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==")!,
        saltSeparator: Base64URL.decode("Bw==")!, rounds: 8, memoryCost: 14)
    let salt = Base64URL.decode("42xEC+ixf3L2lw==")!
    #expect(Base64URL.encodeStandard(try parameters.hash("user1password", salt: salt))
        == "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==")
    let hunter2 = Base64URL.decode("70k8Vg5B3/OrvJOiqusnasv0dLcBHoDAqJrJr7TRLBfMw4MitWx51YXJYFdGiyMbMeKtWtLf5HiBDcN0SUOm4A==")!
    #expect(parameters.verify("hunter2", salt: salt, expected: hunter2))
    #expect(!parameters.verify("hunter3", salt: salt, expected: hunter2))
    var invalid = parameters
    invalid.rounds = 9
    #expect(!invalid.isValid)
    #expect(throws: CryptoError.self) { try invalid.hash("x", salt: salt) }
}

@Test func argon2idHashesSplitIntoTheirPartsAndBackAndStillVerify() throws {
    let stored = try Argon2id.testing.hash("correct horse")
    let parts = try #require(Argon2idPHC(phc: stored))
    #expect(parts.memoryKiB == 64 && parts.iterations == 1 && parts.parallelism == 1)
    #expect(parts.salt.count == 16 && parts.hash.count == 32)
    #expect(parts.phc == stored)
    // Rebuilt from an export's hash and salt, the same password verifies.
    let rebuilt = Argon2idPHC(memoryKiB: parts.memoryKiB, iterations: parts.iterations, parallelism: 1, salt: parts.salt, hash: parts.hash)
    #expect(Argon2id.verify("correct horse", against: rebuilt.phc))
    #expect(!Argon2id.verify("wrong", against: rebuilt.phc))
    for malformed in ["", "$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaA", "$argon2id$v=19$m=64,t=1$c2FsdA$aGFzaA", "$argon2id$v=19$m=64,t=1,p=2$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA"] {
        #expect(Argon2idPHC(phc: malformed) == nil, "\(malformed)")
    }
}

/// RFC 4231's HMAC-SHA256 test cases 1 and 6 (a key longer than the block): what signs webhooks.
struct HMACTests {
    @Test func rfc4231Vectors() {
        let one = HMACSHA256.authenticate(Array("Hi There".utf8), key: [UInt8](repeating: 0x0b, count: 20))
        #expect(one.map { String(format: "%02x", $0) }.joined() == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        let six = HMACSHA256.authenticate(
            Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8), key: [UInt8](repeating: 0xaa, count: 131))
        #expect(six.map { String(format: "%02x", $0) }.joined() == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }
}
