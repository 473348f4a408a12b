import Foundation
import HearthCore
import HearthSQLite
import HearthStorage
import HearthTesting
import Testing

/// The built `hearth-crash-writer`, next to the test bundle in the build directory.
func crashWriterPath() -> String? {
    let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
    if directory.lastPathComponent == "MacOS" || directory.path.hasSuffix(".xctest/Contents") {
        directory = directory.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
    let path = directory.appendingPathComponent("hearth-crash-writer").path
    return FileManager.default.isExecutableFile(atPath: path) ? path : nil
}

/// 20 rounds: a child writes single and multi-path writes continuously and is killed with SIGKILL at a
/// random moment; after each restart every write it reported as acknowledged is present, and no
/// multi-path write is half applied. Kills land in direct commits, and, in odd rounds, in commits to the
/// write log and in folds of it into the records.
@Test(.timeLimit(.minutes(2)))
func acknowledgedWritesSurviveSIGKILL() async throws {
    // A minute of blocking process waits: on a thread of its own (see offThePool).
    try await offThePool {
        guard let writer = crashWriterPath() else {
            Issue.record("hearth-crash-writer is not built next to the tests: run 'swift build' before 'swift test'.")
            return
        }
        let directory = temporaryDirectory("hearth-crash")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var generator = SystemRandomNumberGenerator()
        var acknowledgedTotal = 0
        for round in 0..<20 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: writer)
            // Even rounds run the default engine (which starts writing rows directly and chooses the log when
            // it pays); odd rounds always log and fold every 4 KB (about every 100 writes), so kills land in
            // appends to the log and in folds too.
            process.arguments = [directory, "crash", "r\(round)"] + (round % 2 == 1 ? ["4096"] : [])
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            // Wait for the first acknowledgement (the child has opened and loaded), then a random time.
            var output = Data()
            let deadline = Date().addingTimeInterval(20)
            while output.isEmpty && Date() < deadline {
                output.append(pipe.fileHandleForReading.availableData)
            }
            usleep(UInt32.random(in: 5_000...150_000, using: &generator))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            output.append(pipe.fileHandleForReading.readDataToEndOfFile())
            #expect(process.terminationReason == .uncaughtSignal, "round \(round): the writer exited by itself: \(String(decoding: output, as: UTF8.self).suffix(300))")

            let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
            // A line cut by the kill is not an acknowledgement of anything.
            let complete = output.last == UInt8(ascii: "\n") ? lines : lines.dropLast()
            let engine = try SQLiteStorageEngine(directory: directory, namespace: "crash")
            let root = try engine.load(progress: nil)
            engine.close()
            for line in complete {
                let parts = line.split(separator: " ")
                let name = String(parts[1]), value = Node(Int(name.split(separator: "_")[1])!)
                if parts[0] == "S" {
                    #expect(root.child(at: Path("single/\(name)")) == value, "round \(round): acknowledged write \(name) lost")
                } else {
                    #expect(root.child(at: Path("multi/\(name)/a")) == value, "round \(round): acknowledged update \(name) lost")
                }
                acknowledgedTotal += 1
            }
            root.child(at: "multi").children.forEach { key, node in
                #expect(node.childCount == 2 && node.child("a") == node.child("b"), "multi-path update \(key) is half applied: \(node.json())")
                return true
            }
        }
        #expect(acknowledgedTotal > 20)
    }
}
