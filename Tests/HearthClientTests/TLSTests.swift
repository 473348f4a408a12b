import Foundation
import Testing

@testable import HearthClient
import HearthTesting

/// `wss://` to `hearth serve --tls-cert`: the certificate and the host name are checked; a server whose
/// certificate is not trusted is never talked to.
@Suite(.serialized) struct TLSTests {
    static func certificate(in directory: String) throws -> (cert: String, key: String) {
        let cert = directory + "/cert.pem", key = directory + "/key.pem"
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        ]
        openssl.standardOutput = FileHandle.nullDevice
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        return (cert, key)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl"), "openssl is not installed (Debian package openssl; scripts/setup installs it)"))
    func aTrustedCertificateConnectsAndAnUntrustedOneNever() async throws {
        let directory = NSTemporaryDirectory() + "hearth-client-tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (cert, key) = try Self.certificate(in: directory)
        let server = try TestServer(extraArguments: ["--tls-cert", cert, "--tls-key", key])
        defer { server.stop() }

        // Not trusted (the system's roots do not include it): never connected, nothing sent.
        let untrusted = makeDatabase(server, namespace: "tls", secure: true)
        let connected = Recorder<Bool>()
        untrusted.reference(withPath: ".info/connected").observe(.value) { connected.append($0.value as? Bool ?? false) }
        untrusted.reference(withPath: "x").setValue("must not arrive") { _, _ in }
        // Two attempts that ended without a connection (the certificate refused each time).
        let failedTwice = await eventually(30) { untrusted.repo.queue.sync { untrusted.repo.debugFailedConnectionAttempts } >= 2 }
        #expect(failedTwice)
        #expect(connected.all.allSatisfy { !$0 })
        untrusted.goOffline()

        // Trusted: the same server works.
        setenv("HEARTH_TRUSTED_CERTIFICATES", cert, 1)
        defer { unsetenv("HEARTH_TRUSTED_CERTIFICATES") }
        let trusted = makeDatabase(server, namespace: "tls", secure: true)
        try await trusted.reference(withPath: "y").setValue("over TLS")
        #expect(try await trusted.reference(withPath: "y").getData().value as? String == "over TLS")
        #expect(try await trusted.reference(withPath: "x").getData().value is NSNull)
    }
}
