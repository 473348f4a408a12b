import Dispatch
import HearthStorage

/// A connection kept between the uses of one serial queue (the change feed's reads and its location
/// index): opened on first use, closed once unused for ``idleDuration``, so a namespace that is read keeps
/// one and an idle one holds none (a node may serve many namespaces; PostgreSQL's connections are few). A
/// connect costs more than a read here: 6-12 ms with SCRAM on loopback against ~1 ms for a feed page.
///
/// The queue's blocks may run on any thread, so each use adopts the connection
/// (``PostgresConnection/adopt()``). A kept connection that fails (PostgreSQL restarted while it was
/// idle) is replaced and the use made once more; any failure drops it, so a transaction left open by a
/// failed use never carries over.
final class KeptConnection: @unchecked Sendable {  // touched on `queue` only
    static let idleDuration: Duration = .seconds(5)

    private let endpoint: PostgresEndpoint
    private let queue: DispatchQueue
    private var connection: PostgresConnection?
    private var lastUse = ContinuousClock.now
    private var closeScheduled = false

    init(endpoint: PostgresEndpoint, queue: DispatchQueue) {
        self.endpoint = endpoint
        self.queue = queue
    }

    /// Runs `body` on the kept connection or a new one. `doing` says what for, in messages.
    ///
    /// - Throws: ``StorageError``: PostgreSQL's failures as `StorageError(_:at:doing:)` makes them, and
    ///   whatever `body` throws as it is.
    func use<T>(doing: String, _ body: (PostgresConnection) throws -> T) throws -> T {
        dispatchPrecondition(condition: .onQueue(queue))
        lastUse = .now
        if let kept = connection {
            kept.adopt()
            do {
                return try body(kept)
            } catch is PostgresError {
                drop()  // and once more on a new connection
            } catch {
                drop()
                throw error
            }
        }
        let fresh = try endpoint.connect(doing: doing)
        connection = fresh
        scheduleClose()
        do {
            return try body(fresh)
        } catch let error as PostgresError {
            drop()
            throw StorageError(error, at: endpoint, doing: doing)
        } catch {
            drop()
            throw error
        }
    }

    /// Closes the connection now (the engine closing).
    func close() {
        dispatchPrecondition(condition: .onQueue(queue))
        drop()
    }

    private func drop() {
        connection?.close()
        connection = nil
    }

    private func scheduleClose() {
        guard !closeScheduled else { return }
        closeScheduled = true
        queue.asyncAfter(deadline: .now() + .milliseconds(Int(Self.idleDuration.components.seconds * 1000))) { [self] in
            closeScheduled = false
            guard connection != nil else { return }
            if ContinuousClock.now - lastUse >= Self.idleDuration {
                drop()
            } else {
                scheduleClose()
            }
        }
    }
}
