import Foundation
import HearthSupport
import HearthTesting
import Testing
@testable import HearthClient

/// Every public call the SDK offers, made from inside each kind of callback it runs (and from a
/// transaction's block, which runs on the SDK's own queue): each returns, and its effect happens. A call
/// that re-entered a queue synchronously used to deadlock (childByAutoId in a transaction's block).
@Suite struct ReentrancyTests {
    /// Where a call is made from.
    enum Callback: String, CaseIterable, Sendable {
        case valueListener, childListener, singleEvent, setCompletion, transactionBlock, transactionCompletion
    }

    /// What is called.
    enum Call: String, CaseIterable, Sendable {
        case childByAutoId, setValue, updateChildValues, observe, removeObserver, runTransactionBlock, goOfflineAndOnline
    }

    /// Makes `call` on `database`, writing under `target`; `done` once it has taken effect (the write
    /// acknowledged, the listener heard, the transaction committed).
    static func make(_ call: Call, database: Database, target: DatabaseReference, done: @escaping @Sendable (String) -> Void) {
        switch call {
        case .childByAutoId:
            let key = target.childByAutoId().key ?? ""
            done(key.count == 20 ? "ok" : "bad push id \(key)")
        case .setValue:
            target.child("set").setValue(1) { error, _ in done(error.map { "\($0)" } ?? "ok") }
        case .updateChildValues:
            target.updateChildValues(["a": 1, "b/c": 2]) { error, _ in done(error.map { "\($0)" } ?? "ok") }
        case .observe:
            nonisolated(unsafe) var handle: DatabaseHandle = 0
            handle = target.child("watched").observe(.value) { _ in
                target.child("watched").removeObserver(withHandle: handle)
                done("ok")
            }
        case .removeObserver:
            let handle = target.child("other").observe(.value) { _ in }
            target.child("other").removeObserver(withHandle: handle)
            done("ok")
        case .runTransactionBlock:
            target.child("counter").runTransactionBlock({ data in
                data.value = ((data.value as? Int) ?? 0) + 1
                return .success(withValue: data)
            }, andCompletionBlock: { error, committed, _ in done(error.map { "\($0)" } ?? (committed ? "ok" : "not committed")) })
        case .goOfflineAndOnline:
            database.goOffline()
            database.goOnline()
            target.child("after").setValue(true) { error, _ in done(error.map { "\($0)" } ?? "ok") }
        }
    }

    /// Runs `call` once from inside `callback`; `done` as for ``make(_:database:target:done:)``.
    static func from(_ callback: Callback, _ call: Call, database: Database, source: DatabaseReference, target: DatabaseReference,
                     done: @escaping @Sendable (String) -> Void) {
        let once = Locked(false)
        let run = { @Sendable in
            guard once.withLock({ fired in defer { fired = true }; return !fired }) else { return }
            make(call, database: database, target: target, done: done)
        }
        switch callback {
        case .valueListener:
            _ = source.observe(.value) { _ in run() }
        case .childListener:
            _ = source.observe(.childAdded) { _ in run() }
            source.child("child").setValue(1)
        case .singleEvent:
            source.observeSingleEvent(of: .value) { _ in run() }
        case .setCompletion:
            source.setValue(["written": true]) { _, _ in run() }
        case .transactionBlock:
            source.child("n").runTransactionBlock { data in
                run()
                data.value = 1
                return .success(withValue: data)
            }
        case .transactionCompletion:
            source.child("n").runTransactionBlock({ data in
                data.value = 1
                return .success(withValue: data)
            }, andCompletionBlock: { _, _, _ in run() })
        }
    }

    @Test(arguments: Callback.allCases)
    func everyCallFromInside(_ callback: Callback) async throws {
        let server = try TestServer()
        defer { server.stop() }
        let database = makeDatabase(server, namespace: "reentrant-\(callback.rawValue)")
        for call in Call.allCases {
            let outcome = Recorder<String>()
            let root = database.reference(withPath: "\(callback.rawValue)/\(call.rawValue)")
            Self.from(callback, call, database: database, source: root.child("source"), target: root.child("target")) {
                outcome.append($0)
            }
            #expect(await outcome.wait(seconds: 60) { !$0.isEmpty }, "\(call) from a \(callback): never finished")
            #expect(outcome.all == ["ok"], "\(call) from a \(callback)")
        }
    }
}
