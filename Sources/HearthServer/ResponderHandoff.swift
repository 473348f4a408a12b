import HearthProtocol

/// Carries a responder to another thread's queue (auth, static files) and back through the loop's
/// executor; it is used only on the loop thread, before and after.
final class ResponderHandoff: @unchecked Sendable {
    let responder: any HTTPResponder
    init(_ responder: any HTTPResponder) { self.responder = responder }
}
