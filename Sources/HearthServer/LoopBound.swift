/// Carries a loop-thread value (an object, a callback) through another thread and ``LoopExecutor`` back
/// to the loop; never touched elsewhere, which is what makes the unchecked `Sendable` true.
final class LoopBound<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
