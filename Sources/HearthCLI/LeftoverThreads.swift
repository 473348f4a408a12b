import Foundation

/// The threads Hearth started that are still running, by name (`hearth.storage`, `hearth.postgres.…`):
/// read from `/proc/self/task/*/comm`, where Linux keeps each thread's name (cut to 15 bytes). Empty
/// where there is no `/proc`.
enum LeftoverThreads {
    /// Hearth's threads running now (the main thread is named after the program, `hearth`, without the dot).
    static func now() -> [String] {
        let tasks = "/proc/self/task"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: tasks) else { return [] }
        return entries.compactMap { entry -> String? in
            guard let name = try? String(contentsOfFile: "\(tasks)/\(entry)/comm", encoding: .utf8) else { return nil }
            let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.hasPrefix("hearth.") ? trimmed : nil
        }.sorted()
    }

    /// As ``now()``, after giving threads that were told to stop a moment (up to a second) to end: a
    /// thread that signalled its owner it is done still takes a little while to leave.
    static func waitingBriefly() -> [String] {
        let deadline = Date(timeIntervalSinceNow: 1)
        var left = now()
        while !left.isEmpty && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
            left = now()
        }
        return left
    }
}
