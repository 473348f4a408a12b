import Foundation
#if canImport(Glibc)
    import Glibc
#endif

extension Scenario {
    /// ws.fanout with security rules that read `auth` for every listener, against the same fan-out with
    /// rules that allow everything (rules.md: the rules issue's third benchmark). Both sides authenticate
    /// every connection with a user's token, so the only difference is what the rules evaluate. Hearth
    /// decides a listen when it is made, not per event, so the rate should not move.
    static let wsFanoutRules = Scenario(
        name: "ws.fanout.rules",
        summary: "ws.fanout where every listener's read is decided by rules reading auth, against open rules"
    ) { context in
        let settings = RealtimeLoad.FanoutSettings()
        let (listenerCount, seconds, window) = (settings.listenerCount, settings.seconds, settings.window)
        let runs = context.configuration.measuredRunCount
        // An unsigned ID token, as Firebase's Auth emulator issues them (accepted in emulator mode).
        let claims = #"{"sub":"listener-1","user_id":"listener-1","role":"member","iat":0,"exp":4102444800}"#
        let token = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + base64URL(Array(claims.utf8)) + "."
        let guarded = #"{"rules": {"fan": {".read": "auth != null && auth.token.role == 'member' && auth.uid.beginsWith('listener')", ".write": "auth != null"}}}"#
        let open = #"{"rules": {".read": true, ".write": true}}"#
        print("   \(listenerCount) listeners, \(Int(seconds)) s per run, \(window) writes in flight; every connection signed in as a user")

        func measure(rules: String, label: String) throws -> [Double] {
            let server = try ServerHarness.startHearth(name: "ws-fanout-rules")
            defer {
                ServerHarness.stop(server.process)
                try? FileManager.default.removeItem(atPath: server.directory)
            }
            let status = try ServerHarness.request(
                port: server.port, "PUT", "/.settings/rules.json?ns=bench", body: rules, credential: "owner")
            guard status == 200 else { throw ServerHarness.Failure("rules deploy answered \(status)") }
            let target = LoadTarget(
                label: label, wire: .realtime, port: server.port, pid: server.process.processIdentifier, credential: token,
                fanPath: "/fan", writePath: "/w", stop: {})
            let fleet = try RealtimeLoad.listeners(target, count: listenerCount)
            defer { fleet.stop() }
            return try RealtimeLoad.throughputRuns(target, fleet: fleet, window: window, seconds: seconds, runs: runs).rates
        }

        let withRules = try measure(rules: guarded, label: "auth rules")
        let openRules = try measure(rules: open, label: "open rules")
        let value = RealtimeLoad.median(withRules), reference = RealtimeLoad.median(openRules)
        return BenchmarkResult(
            scenario: "ws.fanout.rules",
            metric: "deliveries per second, 1 writer → \(listenerCount) listeners whose reads rules decide from auth",
            value: value, unit: "messages/s", reference: "the same fan-out under rules that allow everything",
            referenceValue: reference)
    }

    private static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
