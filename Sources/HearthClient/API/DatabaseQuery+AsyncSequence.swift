import Foundation

/// One child event from ``DatabaseQuery/childEvents(_:)``.
public struct ChildEvent: Sendable {
    public let type: DataEventType
    public let snapshot: DataSnapshot
    /// The key of the child before this one in the query's order (nil when first, and for removals).
    public let previousSiblingKey: String?
}

extension DatabaseQuery {
    /// The query's value, now and after every change, as an async sequence (Hearth's addition to
    /// Firebase's API). Ending the loop, or cancelling the task that runs it, removes the listener; a
    /// refused listen (permission denied) ends it with that error.
    ///
    ///     for try await snapshot in ref.child("jokes").snapshots {
    ///         render(snapshot.children)
    ///     }
    public var snapshots: AsyncThrowingStream<DataSnapshot, any Error> {
        AsyncThrowingStream { continuation in
            let id = Repo.makeRegistrationID()
            listen(id, .value, deliver: { snapshot, _ in continuation.yield(snapshot) }, cancel: { error in
                continuation.finish(throwing: error)
            })
            let repo = owner?.repo
            continuation.onTermination = { _ in repo?.removeListener(id) }
        }
    }

    /// Child events of `types` (all four by default), in the order Firebase raises them, as an async
    /// sequence; ending it removes the listeners.
    ///
    ///     for try await event in ref.child("board").queryOrdered(byChild: "time").childEvents() {
    ///         switch event.type { case .childAdded: insert(event.snapshot, after: event.previousSiblingKey) … }
    ///     }
    public func childEvents(
        _ types: Set<DataEventType> = [.childAdded, .childChanged, .childMoved, .childRemoved]
    ) -> AsyncThrowingStream<ChildEvent, any Error> {
        AsyncThrowingStream { continuation in
            var ids: [RegistrationID] = []
            // Registered in raise order, so events of one change arrive in Firebase's order.
            for type in [DataEventType.childRemoved, .childAdded, .childMoved, .childChanged] where types.contains(type) {
                let id = Repo.makeRegistrationID()
                ids.append(id)
                listen(id, type, deliver: { snapshot, previous in
                    continuation.yield(ChildEvent(type: type, snapshot: snapshot, previousSiblingKey: previous))
                }, cancel: { error in continuation.finish(throwing: error) })
            }
            let repo = owner?.repo
            let registered = ids
            continuation.onTermination = { _ in
                for id in registered { repo?.removeListener(id) }
            }
        }
    }
}
