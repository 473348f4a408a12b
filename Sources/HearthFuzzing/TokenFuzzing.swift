import HearthAuth
import HearthCore
import HearthCrypto
import HearthProtocol
import HearthServer
import HearthTesting

/// ID tokens: compact JWTs as a client presents them (REST `auth=`, realtime `auth`), checked by the
/// verifier (signed and, as in emulator mode, unsigned) and by the server's credential path.
///
/// Input: the token text.
enum TokenFuzzing {
    static let target = FuzzTarget(name: "token", input: "a compact JWT", run: run)

    /// One key for the whole run: generating RSA keys is slow.
    static let verifier: TokenVerifier? = {
        guard let key = try? RSAPrivateKey.generate(bits: 1024) else { return nil }
        return TokenVerifier(
            projectID: "demo-fuzz", key: SigningKey(privateKey: key), acceptsUnsignedTokens: true, cacheCapacity: 0,
            clock: { 1_800_000_000 })
    }()

    static func run(_ bytes: [UInt8]) {
        let token = String(decoding: bytes, as: UTF8.self)
        if let context = try? verifier?.verify(token) {
            fuzzCheck(!context.uid.isEmpty && context.uid.utf8.count <= 128, "a token with no usable uid was accepted")
            _ = context.auth
        }
        // The database's own path: emulator mode reads unverified claims from any JWT.
        let (server, pending) = makeFuzzServer()
        let request = HTTPRequest(method: .get, path: "/x.json", queryItems: [("ns", "fuzz"), ("auth", token)])
        let responder = RecordingResponder(limit: 1 << 20)
        server.handle(request, responder: responder)
        pending.drain()
        server.close()
    }
}
