import Foundation
import HearthClient
import HearthFunctions

// A functions process for Tests/compat/test_functions.py: each function appends what it was handed, as
// one JSON line, to the file in HEARTH_PROBE_LOG, so the test can check every delivery from outside.
let logPath = ProcessInfo.processInfo.environment["HEARTH_PROBE_LOG"] ?? "functions-probe.jsonl"
let log = FileHandle(forWritingAtPath: logPath) ?? {
    _ = FileManager.default.createFile(atPath: logPath, contents: nil)
    return FileHandle(forWritingAtPath: logPath)!
}()
log.seekToEndOfFile()
let logLock = NSLock()

func record<T>(_ function: String, _ event: DatabaseEvent<T>, before: DataSnapshot, after: DataSnapshot) {
    let line: [String: Any] = [
        "function": function, "id": event.id, "ref": event.ref, "params": event.params, "type": event.type,
        "authType": event.authType, "authId": event.authId ?? NSNull(), "time": event.time.timeIntervalSince1970,
        "before": before.value ?? NSNull(), "after": after.value ?? NSNull(),
    ]
    let data = try! JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]) + Data("\n".utf8)
    logLock.lock()
    log.write(data)
    logLock.unlock()
}

func record(_ function: String, _ event: DatabaseEvent<Change<DataSnapshot>>) {
    record(function, event, before: event.data.before, after: event.data.after)
}

struct Refused: Error, CustomStringConvertible {
    var description: String { "this function always throws (the test's)" }
}

let functions = Functions()
functions.onValueCreated("/inbox/{messageId}", name: "created") { event in
    record("created", event, before: DataSnapshot(), after: event.data)
    // Writes back with admin access: a processed copy the test reads.
    let text = event.data.childSnapshot(forPath: "text").value as? String ?? ""
    try await event.database.reference(withPath: "processed/\(event.params["messageId"]!)").setValue(text.uppercased())
}
functions.onValueUpdated("/inbox/{messageId}", name: "updated") { event in record("updated", event) }
functions.onValueDeleted("/inbox/{messageId}", name: "deleted") { event in record("deleted", event, before: event.data, after: DataSnapshot()) }
functions.onValueWritten("/seq/{path}/{n}", name: "sequence") { event in
    record("sequence", event)
    // A little work, so that several locations are under way at once.
    try await Task.sleep(nanoseconds: 200_000)
}
functions.onValueWritten("/fail/{id}", name: "failing", attempts: 3) { event in
    record("failing", event)
    throw Refused()
}
func record(_ function: String, _ event: UserEvent) {
    let line: [String: Any] = [
        "function": function, "id": event.id, "type": event.type, "uid": event.data.uid, "email": event.data.email ?? NSNull(),
        "providers": event.data.providerIDs, "disabled": event.data.disabled, "time": event.time.timeIntervalSince1970,
    ]
    let data = try! JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]) + Data("\n".utf8)
    logLock.lock()
    log.write(data)
    logLock.unlock()
}
functions.onUserCreated { event in
    record("userCreated", event)
    // A profile for every new account, written with admin access.
    try await event.database.reference(withPath: "profiles/\(event.data.uid)").setValue(["email": event.data.email ?? ""])
}
functions.onUserDeleted { event in
    record("userDeleted", event)
    try await event.database.reference(withPath: "profiles/\(event.data.uid)").removeValue()
}
functions.run()
