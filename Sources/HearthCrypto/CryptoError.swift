/// A failure inside a C crypto library. Carries which operation failed; never key or password bytes.
public struct CryptoError: Error, CustomStringConvertible, Sendable {
    public let operation: String
    public init(_ operation: String) { self.operation = operation }
    public var description: String { "crypto operation failed: \(operation)" }
}
