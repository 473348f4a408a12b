import Foundation

/// Runs an auth operation and hands its outcome to a completion block on the callback queue, as
/// FirebaseAuth calls its blocks on the main queue.
enum AuthCallbacks {
    /// Carries values that are not `Sendable` (an app's blocks, JSON dictionaries) to where they are used.
    struct Unchecked<Value>: @unchecked Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    static func run<Value>(
        on queue: DispatchQueue, _ completion: ((Value?, (any Error)?) -> Void)?, _ work: @escaping @Sendable () async throws -> Value
    ) {
        let box = completion.map { Unchecked($0) }
        Task {
            do {
                let value = Unchecked(try await work())
                if let box { queue.async { box.value(value.value, nil) } }
            } catch {
                if let box { queue.async { box.value(nil, error) } }
            }
        }
    }

    static func run(on queue: DispatchQueue, _ completion: (((any Error)?) -> Void)?, _ work: @escaping @Sendable () async throws -> Void) {
        let box = completion.map { Unchecked($0) }
        Task {
            do {
                try await work()
                if let box { queue.async { box.value(nil) } }
            } catch {
                if let box { queue.async { box.value(error) } }
            }
        }
    }
}

/// The bounds of the SDK's auth, in one place.
enum AuthLimits {
    /// A token this close to expiring is refreshed before use, and refreshed ahead of time (Firebase's 5 minutes).
    static let refreshMarginSeconds: TimeInterval = 300
    /// After a refresh failed for a reason that may pass (the network), the next try comes this much later.
    static let refreshRetrySeconds: TimeInterval = 30
}
