import Foundation

/// The parts of an argon2id PHC string (`$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`, base64 without
/// padding): what an export states so that the same passwords verify after an import elsewhere, and what
/// an import of such an export puts back together.
public struct Argon2idPHC: Equatable, Sendable {
    /// Memory in KiB (`m`).
    public var memoryKiB: Int
    /// Passes (`t`).
    public var iterations: Int
    /// Lanes (`p`).
    public var parallelism: Int
    public var salt: [UInt8]
    public var hash: [UInt8]

    public init(memoryKiB: Int, iterations: Int, parallelism: Int, salt: [UInt8], hash: [UInt8]) {
        self.memoryKiB = memoryKiB
        self.iterations = iterations
        self.parallelism = parallelism
        self.salt = salt
        self.hash = hash
    }

    /// The parts of `phc`; nil for anything but a version-19 argon2id string with sane parameters.
    public init?(phc: String) {
        let fields = phc.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 6, fields[0].isEmpty, fields[1] == "argon2id", fields[2] == "v=19" else { return nil }
        var parameters: [Substring: Int] = [:]
        for pair in fields[3].split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let value = Int(parts[1]) else { return nil }
            parameters[parts[0]] = value
        }
        guard let memory = parameters["m"], let iterations = parameters["t"], let parallelism = parameters["p"],
            let salt = Self.decode(fields[4]), let hash = Self.decode(fields[5])
        else { return nil }
        self.init(memoryKiB: memory, iterations: iterations, parallelism: parallelism, salt: salt, hash: hash)
        guard isValid else { return nil }
    }

    /// Within what libsodium verifies: 8 KiB to 4 TiB of memory, 1–2³² passes, one lane (libsodium's
    /// only), salts of 8 bytes or more and hashes of 16–64 bytes.
    public var isValid: Bool {
        (8...(1 << 32)).contains(memoryKiB) && (1...Int(UInt32.max)).contains(iterations) && parallelism == 1
            && salt.count >= 8 && salt.count <= 64 && (16...64).contains(hash.count)
    }

    public var phc: String {
        "$argon2id$v=19$m=\(memoryKiB),t=\(iterations),p=\(parallelism)$\(Self.encode(salt))$\(Self.encode(hash))"
    }

    private static func encode(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    private static func decode(_ text: Substring) -> [UInt8]? {
        var padded = String(text)
        while padded.count % 4 != 0 { padded += "=" }
        return Data(base64Encoded: padded).map(Array.init)
    }
}
