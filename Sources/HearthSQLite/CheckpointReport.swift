import HearthStorage
import Synchronization

/// The storage thread's account of its checkpoints, read from any thread (`/metrics`, the loop after a
/// commit): published after each commit when it changed.
final class CheckpointReport: Sendable {
    private let state = Mutex(CheckpointFailures())

    var value: CheckpointFailures { state.withLock { $0 } }

    func publish(_ failures: CheckpointFailures) {
        state.withLock { $0 = failures }
    }
}
