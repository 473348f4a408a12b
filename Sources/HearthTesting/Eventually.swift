import Foundation

/// Waits for `condition` to hold (checked every few milliseconds), up to `seconds`; true when it held.
/// For an event a test cannot be called back on (another thread's counter, a row in PostgreSQL): the
/// test goes on as soon as it happens, and `seconds` only bounds "never". Generous by default: `swift
/// test` keeps both cores of a CI host busy, where a step of 50 ms alone was measured taking 30 s.
public func eventually(_ seconds: Double = 120, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}
