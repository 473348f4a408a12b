// A small app on HearthClient that HearthClientTests drive as a separate process: it can be killed
// (SIGKILL) mid-work and started again, which a test cannot do to itself.
//
//   hearth-client-probe write URL N     persistence on, offline: N updates queued, "queued N" printed,
//                                        then it waits to be killed
//   hearth-client-probe sync URL        persistence on, online: restored writes sent, then a marker
//                                        write; "synced" printed once the marker is acknowledged
//   hearth-client-probe cache URL PATH  persistence on, online: listens to PATH until its value is
//                                        cached, prints it, exits
//   hearth-client-probe offline URL PATH  persistence on, offline from the start: prints the first
//                                        value PATH's listener gets (from the disk cache)
//   hearth-client-probe churn URL RUN   persistence on, online: every 2 ms an update that adds one to
//                                        `count` and sets `w/RUN-i` (printed "w RUN-i" once it is saved);
//                                        every tenth tick a transaction adding one to `tx` ("t started",
//                                        "t committed"); until killed
//   hearth-client-probe watch URL PATH  persistence on, online: prints "value V" for each value of PATH
//
// The cache directory is HEARTH_CLIENT_CACHE_DIR.
import Dispatch
import Foundation
import HearthClient

/// Counts on the callback queue.
final class Counter: @unchecked Sendable {
    private var value = 0
    func increment() -> Int {
        value += 1
        return value
    }
}

/// One line to the test, written at once (a killed process keeps nothing buffered).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// The churn mode's writes, from a timer of its own (off the main actor, as an app's background work).
func churn(_ database: Database, run: String) {
    let ticks = Counter()
    let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "probe.churn"))
    timer.schedule(deadline: .now(), repeating: .milliseconds(2))
    timer.setEventHandler { @Sendable in
        let tick = ticks.increment()
        // Saved to the disk cache before it returns: once printed, the write must reach the server.
        database.reference().updateChildValues(["count": ServerValue.increment(1), "w/\(run)-\(tick)": true])
        say("w \(run)-\(tick)")
        guard tick % 10 == 0 else { return }
        say("t started")
        database.reference(withPath: "tx").runTransactionBlock({ current in
            current.value = ((current.value as? Int) ?? 0) + 1
            return TransactionResult.success(withValue: current)
        }, andCompletionBlock: { _, committed, _ in
            if committed { say("t committed") }
        })
    }
    timer.resume()
    churnTimer = timer
}
nonisolated(unsafe) var churnTimer: (any DispatchSourceTimer)?

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    say("usage: hearth-client-probe write|sync|cache|offline|churn|watch URL [N|PATH|RUN]")
    exit(64)
}
let options = FirebaseOptions(googleAppID: "probe", gcmSenderID: "")
options.databaseURL = arguments[2]
FirebaseApp.configure(options: options)
let database = Database.database()
database.isPersistenceEnabled = true
database.callbackQueue = DispatchQueue(label: "probe.callbacks")

switch arguments[1] {
case "write":
    database.goOffline()
    let count = Int(arguments[3]) ?? 10
    for index in 0..<count {
        database.reference().updateChildValues([
            "count": ServerValue.increment(1), "order/\(index)": ServerValue.timestamp(), "last": index,
        ])
    }
    // Writes are saved before they are applied, so once their local events are raised they are on
    // disk. Offline, with no server data, child events show the local writes (a value event would wait
    // for complete data).
    let seen = Counter()
    database.reference(withPath: "order").observe(.childAdded) { _ in
        if seen.increment() == count { say("queued \(count)") }
    }
    dispatchMain()
case "sync":
    database.reference(withPath: "marker").setValue(true) { error, _ in
        say(error == nil ? "synced" : "failed: \(error!)")
        exit(error == nil ? 0 : 1)
    }
    dispatchMain()
case "cache":
    let path = arguments[3]
    database.reference(withPath: path).observe(.value) { snapshot in
        guard snapshot.exists() else { return }
        // The cache is written a quarter of a second behind.
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) {
            say("cached \(snapshot.childrenCount)")
            exit(0)
        }
    }
    dispatchMain()
case "churn":
    churn(database, run: arguments[3])
    dispatchMain()
case "watch":
    database.reference(withPath: arguments[3]).observe(.value) { snapshot in
        if let value = snapshot.value { say("value \(value)") } else { say("value null") }
    }
    dispatchMain()
case "offline":
    database.goOffline()
    database.reference(withPath: arguments[3]).observe(.value) { snapshot in
        say("value \(snapshot.childrenCount) \(snapshot.exists())")
        exit(0)
    }
    dispatchMain()
default:
    say("unknown mode \(arguments[1])")
    exit(64)
}
