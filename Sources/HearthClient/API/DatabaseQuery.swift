public import Foundation
import HearthCore
import HearthSupport

/// A location and a query on it (order, range, limit), as `DatabaseQuery` in FirebaseDatabase: what
/// listeners observe. Queries are values: each `query…` call returns a new one.
///
///     let top = Database.database().reference(withPath: "scores").queryOrderedByValue().queryLimited(toLast: 3)
///     let handle = top.observe(.childAdded) { snapshot in print(snapshot.key, snapshot.value ?? "") }
///     top.removeObserver(withHandle: handle)
open class DatabaseQuery: NSObject, @unchecked Sendable {  // immutable
    /// The database; nil for a query made with `DatabaseQuery()`.
    let owner: Database?
    let path: Path
    let wireQuery: WireQuery
    /// Why this query cannot be used (an invalid path or bound); operations report it instead of acting.
    let invalid: String?

    /// A query on nothing (Firebase's API allows constructing one); its operations fail.
    public override init() {
        owner = nil
        path = .root
        wireQuery = WireQuery()
        invalid = "this query belongs to no database"
        super.init()
    }

    init(database: Database?, path: Path, query: WireQuery = WireQuery(), invalid: String? = nil) {
        owner = database
        self.path = path
        wireQuery = query
        self.invalid = invalid
        super.init()
    }

    var spec: QuerySpec { QuerySpec(path: path, query: wireQuery) }

    /// The location's URL, and the query when it has one.
    open override var description: String {
        let base = (owner?.info.baseURL ?? "") + path.slashed
        return wireQuery.loadsAllData && wireQuery.index == .priority ? base : base + " " + wireQuery.identifier
    }

    /// The reference to the query's location.
    open var ref: DatabaseReference {
        guard let database = owner else { return DatabaseReference() }
        return DatabaseReference(database: database, path: path, invalid: invalid)
    }

    // MARK: Observing

    @discardableResult
    open func observe(_ eventType: DataEventType, with block: @escaping (DataSnapshot) -> Void) -> DatabaseHandle {
        observe(eventType, andPreviousSiblingKeyWith: { snapshot, _ in block(snapshot) }, withCancel: nil)
    }

    @discardableResult
    open func observe(
        _ eventType: DataEventType, andPreviousSiblingKeyWith block: @escaping (DataSnapshot, String?) -> Void
    ) -> DatabaseHandle {
        observe(eventType, andPreviousSiblingKeyWith: block, withCancel: nil)
    }

    @discardableResult
    open func observe(
        _ eventType: DataEventType, with block: @escaping (DataSnapshot) -> Void, withCancel cancelBlock: ((Error) -> Void)? = nil
    ) -> DatabaseHandle {
        observe(eventType, andPreviousSiblingKeyWith: { snapshot, _ in block(snapshot) }, withCancel: cancelBlock)
    }

    /// Calls `block` for every event of `eventType` from now on (first for what is there already), with
    /// the key of the child before the event's child in the query's order; `cancelBlock` if the server
    /// refuses the listen (permission denied).
    @discardableResult
    open func observe(
        _ eventType: DataEventType, andPreviousSiblingKeyWith block: @escaping (DataSnapshot, String?) -> Void,
        withCancel cancelBlock: ((Error) -> Void)? = nil
    ) -> DatabaseHandle {
        let id = Repo.makeRegistrationID()
        listen(id, eventType, deliver: block, cancel: cancelBlock)
        return id
    }

    /// Registers listener `id`: `deliver` and `cancel` run on the callback queue.
    func listen(
        _ id: RegistrationID, _ eventType: DataEventType, deliver: @escaping (DataSnapshot, String?) -> Void,
        cancel: ((Error) -> Void)?
    ) {
        guard let database = owner, invalid == nil else {
            let message = invalid ?? "this query belongs to no database"
            if let cancel {
                let box = CallbackBox(cancel)
                (owner?.callbackQueue ?? .main).async { box.value(DatabaseErrors.invalid(message)) }
            }
            return
        }
        let block = CallbackBox(deliver)
        let cancelBox = cancel.map { CallbackBox($0) }
        let deliverEvent: @Sendable (RaisedEvent) -> Void = { [weak database] event in
            let snapshot = DataSnapshot(database: database, path: event.path, node: event.node, index: event.index)
            block.value(snapshot, event.previousKey?.string)
        }
        var cancelEvent: (@Sendable (RequestOutcome) -> Void)?
        if let cancelBox {
            cancelEvent = { outcome in cancelBox.value(DatabaseErrors.error(outcome)) }
        }
        database.repo.addListener(id, spec: spec, type: eventType.listenType, deliver: deliverEvent, cancel: cancelEvent)
    }

    open func observeSingleEvent(of eventType: DataEventType, with block: @escaping (DataSnapshot) -> Void) {
        observeSingleEvent(of: eventType, andPreviousSiblingKeyWith: { snapshot, _ in block(snapshot) }, withCancel: nil)
    }

    open func observeSingleEvent(
        of eventType: DataEventType, andPreviousSiblingKeyWith block: @escaping (DataSnapshot, String?) -> Void
    ) {
        observeSingleEvent(of: eventType, andPreviousSiblingKeyWith: block, withCancel: nil)
    }

    open func observeSingleEvent(
        of eventType: DataEventType, with block: @escaping (DataSnapshot) -> Void, withCancel cancelBlock: ((Error) -> Void)? = nil
    ) {
        observeSingleEvent(of: eventType, andPreviousSiblingKeyWith: { snapshot, _ in block(snapshot) }, withCancel: cancelBlock)
    }

    /// Calls `block` once, for the first event of `eventType`, then stops listening.
    open func observeSingleEvent(
        of eventType: DataEventType, andPreviousSiblingKeyWith block: @escaping (DataSnapshot, String?) -> Void,
        withCancel cancelBlock: ((Error) -> Void)? = nil
    ) {
        let id = Repo.makeRegistrationID()
        let fired = Locked(false)
        let repo = owner?.repo
        listen(id, eventType, deliver: { snapshot, previous in
            guard !fired.withLock({ done in defer { done = true }; return done }) else { return }
            repo?.removeListener(id)
            block(snapshot, previous)
        }, cancel: cancelBlock)
    }

    @discardableResult
    open func observeSingleEventAndPreviousSiblingKey(of eventType: DataEventType) async -> (DataSnapshot, String?) {
        await withCheckedContinuation { continuation in
            observeSingleEvent(of: eventType, andPreviousSiblingKeyWith: { continuation.resume(returning: ($0, $1)) }, withCancel: { _ in
                continuation.resume(returning: (DataSnapshot(), nil))
            })
        }
    }

    open func removeObserver(withHandle handle: DatabaseHandle) {
        owner?.repo.removeListener(handle)
    }

    /// Removes every listener of this query (for a reference: every listener at its location).
    open func removeAllObservers() {
        guard let database = owner else { return }
        database.repo.removeListeners(at: path, spec: self is DatabaseReference ? nil : spec)
    }

    /// Keeps this query's data synced (and on disk, with persistence) without a listener.
    open func keepSynced(_ keepSynced: Bool) {
        guard let database = owner, invalid == nil else { return }
        database.repo.keepSynced(spec, keepSynced)
    }

    // MARK: Reading once

    /// The latest value: from an active listener's complete data at once, else from the server, else
    /// (offline) from the disk cache; else an error.
    open func getData(completion block: @escaping (Error?, DataSnapshot?) -> Void) {
        let box = CallbackBox(block)
        guard let database = owner, invalid == nil else {
            let message = invalid ?? "this query belongs to no database"
            (owner?.callbackQueue ?? .main).async { box.value(DatabaseErrors.invalid(message), nil) }
            return
        }
        let description = "\(path.slashed) \(wireQuery.identifier)"
        let index = wireQuery.index
        let path = self.path
        database.repo.get(spec) { [weak database] (result: Result<Node, RequestOutcome>) in
            switch result {
            case .success(let node):
                box.value(nil, DataSnapshot(database: database, path: path, node: node, index: index))
            case .failure(let outcome):
                box.value(outcome.status == "disconnect" ? DatabaseErrors.offline(description) : DatabaseErrors.error(outcome), nil)
            }
        }
    }

    @discardableResult
    open func getData() async throws -> DataSnapshot {
        try await withCheckedThrowingContinuation { continuation in
            getData { error, snapshot in
                if let snapshot { continuation.resume(returning: snapshot) } else {
                    continuation.resume(throwing: error ?? DatabaseErrors.invalid("no data"))
                }
            }
        }
    }

    // MARK: Building queries

    private func with(_ change: (inout WireQuery) -> String?) -> DatabaseQuery {
        var query = wireQuery
        let problem = change(&query)
        return DatabaseQuery(database: owner, path: path, query: query, invalid: invalid ?? problem)
    }

    open func queryLimited(toFirst limit: UInt) -> DatabaseQuery {
        with { $0.limit = (Int(min(limit, UInt(QueryLimit.countMax))), false); return limit == 0 ? "queryLimited needs a limit above 0" : nil }
    }

    open func queryLimited(toLast limit: UInt) -> DatabaseQuery {
        with { $0.limit = (Int(min(limit, UInt(QueryLimit.countMax))), true); return limit == 0 ? "queryLimited needs a limit above 0" : nil }
    }

    open func queryOrdered(byChild key: String) -> DatabaseQuery {
        let childPath = Path(key)
        var problem: String?
        do { try KeyValidation.validate(readPath: childPath) } catch { problem = "queryOrdered(byChild:): \(error.message)" }
        if childPath.isRoot { problem = "queryOrdered(byChild:) needs a child key; use queryOrderedByValue()" }
        return with { $0.index = .child(childPath); return problem }
    }

    open func queryOrderedByKey() -> DatabaseQuery { with { $0.index = .key; return nil } }
    open func queryOrderedByValue() -> DatabaseQuery { with { $0.index = .value; return nil } }
    open func queryOrderedByPriority() -> DatabaseQuery { with { $0.index = .priority; return nil } }

    private func bound(_ value: Any?, _ name: String?, inclusive: Bool, sentinel: String?) -> (WireQuery.Bound?, String?) {
        do {
            let node = try FoundationValues.leaf(from: value)
            return (WireQuery.Bound(value: node, name: name ?? sentinel, inclusive: inclusive), nil)
        } catch {
            return (nil, "query bound: \(error.message)")
        }
    }

    open func queryStarting(atValue startValue: Any?) -> DatabaseQuery { queryStarting(atValue: startValue, childKey: nil) }

    open func queryStarting(atValue startValue: Any?, childKey: String?) -> DatabaseQuery {
        let (bound, problem) = bound(startValue, childKey, inclusive: true, sentinel: nil)
        return with { $0.start = bound; return problem }
    }

    open func queryStarting(afterValue startAfterValue: Any?) -> DatabaseQuery {
        queryStarting(afterValue: startAfterValue, childKey: nil)
    }

    /// After the value (and key): JS's encoding, `sin: false`, with `[MAX_NAME]` when no key is given
    /// on an index other than the key.
    open func queryStarting(afterValue startAfterValue: Any?, childKey: String?) -> DatabaseQuery {
        let sentinel: String? = wireQuery.index == .key ? nil : "[MAX_NAME]"
        let (bound, problem) = bound(startAfterValue, childKey, inclusive: false, sentinel: sentinel)
        return with { $0.start = bound; return problem }
    }

    open func queryEnding(atValue endValue: Any?) -> DatabaseQuery { queryEnding(atValue: endValue, childKey: nil) }

    open func queryEnding(atValue endValue: Any?, childKey: String?) -> DatabaseQuery {
        let (bound, problem) = bound(endValue, childKey, inclusive: true, sentinel: nil)
        return with { $0.end = bound; return problem }
    }

    open func queryEnding(beforeValue endValue: Any?) -> DatabaseQuery { queryEnding(beforeValue: endValue, childKey: nil) }

    open func queryEnding(beforeValue endValue: Any?, childKey: String?) -> DatabaseQuery {
        let sentinel: String? = wireQuery.index == .key ? nil : "[MIN_NAME]"
        let (bound, problem) = bound(endValue, childKey, inclusive: false, sentinel: sentinel)
        return with { $0.end = bound; return problem }
    }

    open func queryEqual(toValue value: Any?) -> DatabaseQuery { queryEqual(toValue: value, childKey: nil) }

    open func queryEqual(toValue value: Any?, childKey: String?) -> DatabaseQuery {
        let (start, problem) = bound(value, childKey, inclusive: true, sentinel: nil)
        return with {
            $0.start = start
            $0.end = start
            return problem
        }
    }
}
