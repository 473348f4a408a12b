import Foundation
import HearthCore
import HearthWire

/// A location in the database, as `DatabaseReference` in FirebaseDatabase: read it (it is a query on
/// everything there), write it, and navigate from it.
///
///     let joke = Database.database().reference(withPath: "jokes").childByAutoId()
///     joke.setValue(["text": "knock knock", "votes": 0]) { error, _ in … }
///     try await joke.child("votes").setValue(1)
open class DatabaseReference: DatabaseQuery, @unchecked Sendable {  // immutable
    /// A reference to nothing (Firebase's API allows constructing one); its operations fail.
    public override init() {
        super.init()
    }

    init(database: Database, path: Path, invalid: String? = nil) {
        super.init(database: database, path: path, query: WireQuery(), invalid: invalid)
    }

    /// A reference from a path as an app writes it: checked as Firebase checks it.
    convenience init(database: Database, pathString: String) {
        let path = Path(pathString)
        var problem: String?
        if path.first?.string != ".info" {
            do { try KeyValidation.validate(readPath: path) } catch { problem = "Invalid path '\(pathString)': \(error.message)" }
        }
        self.init(database: database, path: path, invalid: problem)
    }

    // MARK: Navigation

    open func child(_ pathString: String) -> DatabaseReference {
        guard let database = owner else { return DatabaseReference() }
        let relative = Path(pathString)
        let path = self.path.appending(path: relative)
        var problem = invalid
        if problem == nil, path.first?.string != ".info" {
            do { try KeyValidation.validate(readPath: path) } catch { problem = "Invalid child path '\(pathString)': \(error.message)" }
        }
        return DatabaseReference(database: database, path: path, invalid: problem)
    }

    /// A child under a new push ID: keys in chronological order, unique across clients.
    open func childByAutoId() -> DatabaseReference {
        guard let database = owner else { return DatabaseReference() }
        return child(database.repo.nextPushID())
    }

    open var parent: DatabaseReference? {
        guard let database = owner, let parent = path.parent else { return nil }
        return DatabaseReference(database: database, path: parent, invalid: invalid)
    }

    open var root: DatabaseReference {
        guard let database = owner else { return DatabaseReference() }
        return DatabaseReference(database: database, path: .root)
    }

    /// The last key; nil at the root.
    open var key: String? { path.last?.string }

    open var database: Database {
        guard let database = owner else {
            fatalError("this DatabaseReference was made with DatabaseReference() and belongs to no database")
        }
        return database
    }

    /// `http(s)://host/path` with each key percent-encoded.
    open var url: String {
        guard let database = owner else { return "" }
        let keys = path.keys.map { $0.string.addingPercentEncoding(withAllowedCharacters: Self.keyCharacters) ?? $0.string }
        return database.info.url(ofEncodedPath: keys.joined(separator: "/"))
    }

    private static let keyCharacters: CharacterSet = {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-_")
        return allowed
    }()

    /// The URL (Firebase declares `description()` as a method on references; the `description`
    /// property, inherited, is the same text).
    open func description() -> String { url }

    // MARK: Writing

    /// Runs `write` unless this reference or `makeValue` is invalid; otherwise reports why through
    /// `completion` (Firebase raises an exception there; Hearth reports an error).
    private func perform(
        _ completion: ((Error?, DatabaseReference) -> Void)?,
        _ write: (Repo, Path, @escaping @Sendable (RequestOutcome) -> Void) throws(FoundationValues.Invalid) -> Void
    ) {
        let box = completion.map { CallbackBox($0) }
        guard let database = owner, invalid == nil else {
            report(DatabaseErrors.invalid(invalid ?? "this reference belongs to no database"), box)
            return
        }
        if path.first?.string == ".info" {
            report(DatabaseErrors.invalid("Can't modify data under /.info"), box)
            return
        }
        let reference = self
        do {
            try write(database.repo, path) { outcome in
                box?.value(outcome.isOK ? nil : DatabaseErrors.error(outcome), reference)
            }
        } catch {
            ClientLog.warning(error.message)
            report(DatabaseErrors.invalid(error.message), box)
        }
    }

    private func report(_ error: NSError, _ box: CallbackBox<(Error?, DatabaseReference) -> Void>?) {
        guard let box else {
            ClientLog.warning(error.localizedDescription)
            return
        }
        let reference = self
        (owner?.callbackQueue ?? .main).async { box.value(error, reference) }
    }

    private func asyncWrite(_ start: (@escaping (Error?, DatabaseReference) -> Void) -> Void) async throws -> DatabaseReference {
        try await withCheckedThrowingContinuation { continuation in
            start { error, reference in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: reference) }
            }
        }
    }

    open func setValue(_ value: Any?) { setValue(value, andPriority: nil, completion: nil) }

    open func setValue(_ value: Any?, withCompletionBlock block: @escaping (Error?, DatabaseReference) -> Void) {
        setValue(value, andPriority: nil, completion: block)
    }

    @discardableResult
    open func setValue(_ value: Any?) async throws -> DatabaseReference {
        try await asyncWrite { setValue(value, andPriority: nil, completion: $0) }
    }

    open func setValue(_ value: Any?, andPriority priority: Any?) { setValue(value, andPriority: priority, completion: nil) }

    open func setValue(
        _ value: Any?, andPriority priority: Any?, withCompletionBlock block: @escaping (Error?, DatabaseReference) -> Void
    ) {
        setValue(value, andPriority: priority, completion: block)
    }

    @discardableResult
    open func setValue(_ value: Any?, andPriority priority: Any?) async throws -> DatabaseReference {
        try await asyncWrite { setValue(value, andPriority: priority, completion: $0) }
    }

    private func setValue(_ value: Any?, andPriority priority: Any?, completion: ((Error?, DatabaseReference) -> Void)?) {
        perform(completion) { repo, path, done throws(FoundationValues.Invalid) in
            var node = try FoundationValues.node(from: value, at: path)
            if let priority, !(priority is NSNull) {
                node = node.withPriority(Priority(try FoundationValues.leaf(from: priority)))
            }
            repo.set(path, node, completion: done)
        }
    }

    open func removeValue() { setValue(nil) }

    open func removeValue(completionBlock block: @escaping (Error?, DatabaseReference) -> Void) {
        setValue(nil, withCompletionBlock: block)
    }

    @discardableResult
    open func removeValue() async throws -> DatabaseReference { try await setValue(nil) }

    open func setPriority(_ priority: Any?) { setPriority(priority, completion: nil) }

    open func setPriority(_ priority: Any?, withCompletionBlock block: @escaping (Error?, DatabaseReference) -> Void) {
        setPriority(priority, completion: block)
    }

    @discardableResult
    open func setPriority(_ priority: Any?) async throws -> DatabaseReference {
        try await asyncWrite { setPriority(priority, completion: $0) }
    }

    private func setPriority(_ priority: Any?, completion: ((Error?, DatabaseReference) -> Void)?) {
        perform(completion) { repo, path, done throws(FoundationValues.Invalid) in
            let leaf = try FoundationValues.leaf(from: priority)
            repo.set(path.appending(.priorityKey), leaf, completion: done)
        }
    }

    open func updateChildValues(_ values: [AnyHashable: Any]) { updateChildValues(values, completion: nil) }

    open func updateChildValues(_ values: [AnyHashable: Any], withCompletionBlock block: @escaping (Error?, DatabaseReference) -> Void) {
        updateChildValues(values, completion: block)
    }

    @discardableResult
    open func updateChildValues(_ values: [AnyHashable: Any]) async throws -> DatabaseReference {
        try await asyncWrite { updateChildValues(values, completion: $0) }
    }

    private func updateChildValues(_ values: [AnyHashable: Any], completion: ((Error?, DatabaseReference) -> Void)?) {
        perform(completion) { repo, path, done throws(FoundationValues.Invalid) in
            repo.update(path, try Self.children(of: values, at: path), completion: done)
        }
    }

    /// A multi-path update's children: paths relative to `path`, none inside another.
    static func children(of values: [AnyHashable: Any], at path: Path) throws(FoundationValues.Invalid) -> [(Path, Node)] {
        var children: [(Path, Node)] = []
        for (key, value) in values {
            guard let text = key.base as? String else { throw FoundationValues.Invalid(message: "updateChildValues keys must be strings") }
            let relative = Path(text)
            guard !relative.isRoot else { throw FoundationValues.Invalid(message: "updateChildValues: '\(text)' is not a path") }
            let full = path.appending(path: relative)
            do { try KeyValidation.validate(writePath: full) } catch { throw FoundationValues.Invalid(message: error.message) }
            children.append((relative, try FoundationValues.node(from: value, at: full)))
        }
        children.sort { $0.0 < $1.0 }
        if let (a, b) = Path.firstOverlap(in: children.map(\.0)) {
            throw FoundationValues.Invalid(message: "updateChildValues: paths '\(a)' and '\(b)' overlap")
        }
        return children
    }

    // MARK: onDisconnect

    private func onDisconnect(_ completion: ((Error?, DatabaseReference) -> Void)?, _ request: (Path) throws(FoundationValues.Invalid) -> ClientRequest) {
        perform(completion) { repo, path, done throws(FoundationValues.Invalid) in
            repo.onDisconnect(try request(path), completion: done)
        }
    }

    open func onDisconnectSetValue(_ value: Any?) { onDisconnectSetValue(value, andPriority: nil, completion: nil) }

    open func onDisconnectSetValue(_ value: Any?, withCompletionBlock block: @escaping (Error?, DatabaseReference) -> Void) {
        onDisconnectSetValue(value, andPriority: nil, completion: block)
    }

    @discardableResult
    open func onDisconnectSetValue(_ value: Any?) async throws -> DatabaseReference {
        try await asyncWrite { onDisconnectSetValue(value, andPriority: nil, completion: $0) }
    }

    open func onDisconnectSetValue(_ value: Any?, andPriority priority: Any) {
        onDisconnectSetValue(value, andPriority: priority, completion: nil)
    }

    open func onDisconnectSetValue(
        _ value: Any?, andPriority priority: Any?, withCompletionBlock block: @escaping (Error?, DatabaseReference) -> Void
    ) {
        onDisconnectSetValue(value, andPriority: priority, completion: block)
    }

    @discardableResult
    open func onDisconnectSetValue(_ value: Any?, andPriority priority: Any?) async throws -> DatabaseReference {
        try await asyncWrite { onDisconnectSetValue(value, andPriority: priority, completion: $0) }
    }

    private func onDisconnectSetValue(_ value: Any?, andPriority priority: Any?, completion: ((Error?, DatabaseReference) -> Void)?) {
        onDisconnect(completion) { path throws(FoundationValues.Invalid) in
            var node = try FoundationValues.node(from: value, at: path)
            if let priority, !(priority is NSNull) { node = node.withPriority(Priority(try FoundationValues.leaf(from: priority))) }
            return .onDisconnectPut(path: path, data: node)
        }
    }

    open func onDisconnectRemoveValue() { onDisconnectSetValue(nil) }

    open func onDisconnectRemoveValue(completionBlock block: @escaping (Error?, DatabaseReference) -> Void) {
        onDisconnectSetValue(nil, withCompletionBlock: block)
    }

    @discardableResult
    open func onDisconnectRemoveValue() async throws -> DatabaseReference { try await onDisconnectSetValue(nil) }

    open func onDisconnectUpdateChildValues(_ values: [AnyHashable: Any]) { onDisconnectUpdateChildValues(values, completion: nil) }

    open func onDisconnectUpdateChildValues(
        _ values: [AnyHashable: Any], withCompletionBlock block: @escaping (Error?, DatabaseReference) -> Void
    ) {
        onDisconnectUpdateChildValues(values, completion: block)
    }

    @discardableResult
    open func onDisconnectUpdateChildValues(_ values: [AnyHashable: Any]) async throws -> DatabaseReference {
        try await asyncWrite { onDisconnectUpdateChildValues(values, completion: $0) }
    }

    private func onDisconnectUpdateChildValues(_ values: [AnyHashable: Any], completion: ((Error?, DatabaseReference) -> Void)?) {
        onDisconnect(completion) { path throws(FoundationValues.Invalid) in
            .onDisconnectMerge(path: path, data: try Self.children(of: values, at: path))
        }
    }

    open func cancelDisconnectOperations() { cancelDisconnectOperations(completionBlock: nil) }

    open func cancelDisconnectOperations(completionBlock block: ((Error?, DatabaseReference) -> Void)? = nil) {
        onDisconnect(block) { path in .onDisconnectCancel(path: path) }
    }

    @discardableResult
    open func cancelDisconnectOperations() async throws -> DatabaseReference {
        try await asyncWrite { cancelDisconnectOperations(completionBlock: $0) }
    }

    // MARK: Connection (every database)

    open class func goOffline() { for database in Database.allDatabases() { database.goOffline() } }
    open class func goOnline() { for database in Database.allDatabases() { database.goOnline() } }

    // MARK: Transactions

    open func runTransactionBlock(_ block: @escaping (MutableData) -> TransactionResult) {
        runTransactionBlock(block, andCompletionBlock: nil, withLocalEvents: true)
    }

    open func runTransactionBlock(
        _ block: @escaping (MutableData) -> TransactionResult,
        andCompletionBlock completionBlock: @escaping (Error?, Bool, DataSnapshot?) -> Void
    ) {
        runTransactionBlock(block, andCompletionBlock: completionBlock, withLocalEvents: true)
    }

    @discardableResult
    open func runTransactionBlock(_ block: @escaping (MutableData) -> TransactionResult) async throws -> (Bool, DataSnapshot) {
        try await withCheckedThrowingContinuation { continuation in
            runTransactionBlock(block, andCompletionBlock: { error, committed, snapshot in
                if let error { continuation.resume(throwing: error) } else {
                    continuation.resume(returning: (committed, snapshot ?? DataSnapshot()))
                }
            }, withLocalEvents: true)
        }
    }

    /// Runs `block` on the current value and writes its result only if nobody changed the value
    /// meanwhile; otherwise runs it again on the new value (up to 25 times). `block` may run more than
    /// once, on the SDK's own queue: keep it quick and free of side effects.
    open func runTransactionBlock(
        _ block: @escaping (MutableData) -> TransactionResult,
        andCompletionBlock completionBlock: ((Error?, Bool, DataSnapshot?) -> Void)?, withLocalEvents localEvents: Bool
    ) {
        let completion = completionBlock.map { CallbackBox($0) }
        guard let database = owner, invalid == nil, path.first?.string != ".info" else {
            let message = invalid ?? (path.first?.string == ".info" ? "Can't modify data under /.info" : "this reference belongs to no database")
            if let completion { (owner?.callbackQueue ?? .main).async { completion.value(DatabaseErrors.invalid(message), false, nil) } }
            return
        }
        let update = CallbackBox(block)
        let path = self.path
        database.repo.runTransaction(at: path, localEvents: localEvents, update: { current in
            let data = MutableData(node: current)
            guard let committed = update.value(data).data else { return .abort }
            if let problem = committed.root.invalid { return .invalid(problem) }
            return .commit(committed.root.node)
        }, completion: { [weak database] outcome, committed, node in
            let snapshot = node.map { DataSnapshot(database: database, path: path, node: $0) }
            completion?.value(outcome.map(DatabaseErrors.error), committed, snapshot)
        })
    }
}
