import Foundation
import Testing

/// Firebase's quickstart-ios database samples, call for call (Tests/Programs/QuickstartYardstick), as a
/// process of their own against a real `hearth serve --emulator`: what an iOS app moving here runs first.
@Suite struct QuickstartYardstickTests {
    @Test func theQuickstartSamplesRunUnchangedAgainstHearth() async throws {
        let server = try TestServer()
        defer { server.stop() }
        // The samples' nodes open as in their test-mode rules; anything else (the program's `locked`) refused.
        // (A `.write: false` below a granting `.write: true` would refuse nothing: grants cascade.)
        let open = ["users", "posts", "user-posts", "post-comments"].map { #""\#($0)":{".write":true}"# }
        let rules = #"{"rules":{".read":true,"# + open.joined(separator: ",") + "}}"
        let (status, _) = try server.http("PUT", "/.settings/rules.json?ns=quickstart", body: rules)
        #expect(status == 200)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestServer.binary).deletingLastPathComponent()
            .appendingPathComponent("quickstart-yardstick")
        var environment = ProcessInfo.processInfo.environment
        environment["HEARTH_DATABASE_URL"] = server.databaseURL("quickstart")
        environment["HEARTH_API_KEY"] = "quickstart-key"
        environment["HEARTH_PROJECT_ID"] = "demo-quickstart"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // Reading to end of file is the wait: the program exits after its last step or its first failure.
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("quickstart: done"), "\(text)")
        #expect(!text.contains("FAIL"), "\(text)")
        // The refused fire-and-forget write is logged as FirebaseDatabase logs it.
        #expect(text.contains("setValue: or removeValue: at /locked failed: permission_denied"), "\(text)")
    }
}
