// hearth-crash-writer: writes to a namespace as fast as it can until it is killed, printing one line per
// write *after* the write is durable. The crash test in HearthSQLiteTests kills it with SIGKILL at random
// moments and checks that every line it printed is in the database after a restart.
//
// Usage: hearth-crash-writer DATA_DIR NAMESPACE ROUND
//   every third write is a multi-path update of ROUND_i/a and ROUND_i/b under /multi (both or neither
//   may survive), the others set /single/ROUND_i. Acknowledged writes print "S ROUND_i" or "M ROUND_i".

#if canImport(Glibc)
    import Glibc
#endif
import Dispatch
import HearthCore
import HearthSQLite
import HearthStorage

let arguments = CommandLine.arguments
guard arguments.count == 4 || (arguments.count == 5 && Int(arguments[4]) != nil) else {
    print("usage: hearth-crash-writer DATA_DIR NAMESPACE ROUND [LOG_FOLD_BYTES]")
    exit(64)
}
let round = arguments[3]
do {
    let engine = try SQLiteStorageEngine(
        directory: arguments[1], namespace: arguments[2],
        logFoldByteCount: arguments.count == 5 ? Int(arguments[4])! : SQLiteStorageEngine.defaultLogFoldByteCount,
        writeLog: arguments.count == 5 ? .always : .adaptive)
    let database = DurableDatabase(engine: engine, root: try engine.load(progress: nil))
    // Up to 64 writes in flight, so commits group several writes.
    let inFlight = DispatchSemaphore(value: 64)
    var index = 0
    while true {
        inFlight.wait()
        let name = "\(round)_\(index)"
        let value = Node(index)
        let report: @Sendable (Result<DurableDatabase.CommittedWrite, any Error>, String) -> Void = { result, line in
            if case .success = result {
                let text = Array((line + "\n").utf8)
                _ = text.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }  // one write(2): whole lines
            }
            inFlight.signal()
        }
        if index % 3 == 0 {
            database.update("multi", with: [(Path("\(name)/a"), value), (Path("\(name)/b"), value)]) { report($0, "M \(name)") }
        } else {
            database.set(Path("single/\(name)"), to: value) { report($0, "S \(name)") }
        }
        index += 1
    }
} catch {
    print("hearth-crash-writer: \(error)")
    exit(1)
}
