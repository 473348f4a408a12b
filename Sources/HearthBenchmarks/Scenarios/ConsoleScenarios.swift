import Foundation
#if canImport(Glibc)
    import Glibc
#endif

extension Scenario {
    /// The console's Data screen opening a namespace of 1M leaves under one key through the real
    /// `hearth serve`: the root's first page, then the big node's first page (docs/console-api.md). The
    /// reference is what a console without paging must do to list the same children: Firebase's
    /// `shallow=true` read of the node, all 1M keys.
    static let consoleOpen = Scenario(
        name: "console.open",
        summary: "Console tree: open a namespace of 1M leaves (root page + first page of the 1M children) vs a shallow GET of them"
    ) { context in
        let leaves = Int(ProcessInfo.processInfo.environment["HEARTH_BENCH_CONSOLE_LEAVES"] ?? "") ?? 1_000_000
        let hearth = try ServerHarness.startHearth(name: "console-open")
        defer {
            ServerHarness.stop(hearth.process)
            try? FileManager.default.removeItem(atPath: hearth.directory)
        }
        var body = "{"
        body.reserveCapacity(leaves * 16)
        for index in 0..<leaves { body += (index == 0 ? "" : ",") + "\"k\(1_000_000 + index)\":\(index)" }
        body += "}"
        let put = try HTTPExchange.send(port: hearth.port, "PUT", "/list.json?ns=bench&print=silent", body: body, headers: ["Authorization: Bearer owner"])
        guard put.status == 204 else { throw ServerHarness.Failure("the PUT of \(leaves) leaves answered \(put.status)") }
        let signIn = try HTTPExchange.send(port: hearth.port, "POST", "/console/api/signin", body: #"{"token":"owner"}"#)
        guard let cookie = signIn.header("set-cookie")?.split(separator: ";").first.map(String.init) else {
            throw ServerHarness.Failure("the console sign-in answered \(signIn.status) without a cookie")
        }
        // Every console request but this one carries the session's CSRF token, as the console's pages do.
        let session = try HTTPExchange.send(port: hearth.port, "GET", "/console/api/session", headers: ["Cookie: \(cookie)"])
        guard let fields = try? JSONSerialization.jsonObject(with: Data(session.body)) as? [String: Any], let csrf = fields["csrf"] as? String else {
            throw ServerHarness.Failure("the console session answered \(session.status) without a CSRF token")
        }
        let consoleHeaders = ["Cookie: \(cookie)", "X-Hearth-CSRF: \(csrf)"]
        print("   \(leaves) leaves under /list (\(body.utf8.count >> 20) MiB of JSON); over loopback HTTP")
        var consoleBytes = 0
        let console = try context.measure("console: root + first page") { () throws(ServerHarness.Failure) in
            let root = try HTTPExchange.send(port: hearth.port, "GET", "/console/api/children?ns=bench&path=/", headers: consoleHeaders)
            let page = try HTTPExchange.send(port: hearth.port, "GET", "/console/api/children?ns=bench&path=/list&limit=100", headers: consoleHeaders)
            guard root.status == 200, page.status == 200, page.body.count < 10_000 else {
                throw ServerHarness.Failure("console pages answered \(root.status)/\(page.status) with \(page.body.count) bytes")
            }
            consoleBytes = root.body.count + page.body.count
        }
        var shallowBytes = 0
        let shallow = try context.measure("REST shallow GET of /list") { () throws(ServerHarness.Failure) in
            let answer = try HTTPExchange.send(port: hearth.port, "GET", "/list.json?ns=bench&shallow=true", headers: ["Authorization: Bearer owner"])
            guard answer.status == 200 else { throw ServerHarness.Failure("the shallow GET answered \(answer.status)") }
            shallowBytes = answer.body.count
        }
        print("   bytes read: console \(consoleBytes), shallow GET \(shallowBytes)")
        let milliseconds = { (duration: Duration) in Double(duration.components.attoseconds) / 1e15 + Double(duration.components.seconds) * 1000 }
        return BenchmarkResult(
            scenario: "console.open", metric: "time to open a namespace of 1M leaves (median)",
            value: milliseconds(console.median), unit: "ms",
            reference: "REST shallow=true GET of the 1M children (what listing them costs without paging)",
            referenceValue: milliseconds(shallow.median),
            extras: [("consoleBytes", Double(consoleBytes)), ("shallowBytes", Double(shallowBytes))])
    }
}

/// One HTTP/1.1 request on a fresh loopback connection, with the whole answer read.
enum HTTPExchange {
    struct Answer {
        var status: Int
        var head: String
        var body: [UInt8]

        func header(_ name: String) -> String? {
            for line in head.split(separator: "\r\n") {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2, parts[0].lowercased() == name { return parts[1].trimmingCharacters(in: .whitespaces) }
            }
            return nil
        }
    }

    static func send(port: Int, _ method: String, _ target: String, body: String = "", headers: [String] = []) throws(ServerHarness.Failure) -> Answer {
        let fd = ServerHarness.connectLoopback(port: port)
        guard fd >= 0 else { throw ServerHarness.Failure("cannot connect to port \(port)") }
        defer { close(fd) }
        let extra = headers.map { $0 + "\r\n" }.joined()
        let request = Array("\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(extra)Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n".utf8) + Array(body.utf8)
        var sent = 0
        while sent < request.count {
            let count = request.withUnsafeBytes { write(fd, $0.baseAddress! + sent, request.count - sent) }
            guard count > 0 else { throw ServerHarness.Failure("the request to port \(port) was cut short") }
            sent += count
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            response.append(contentsOf: buffer[..<count])
        }
        guard let split = response.firstRange(of: [13, 10, 13, 10]) else { throw ServerHarness.Failure("no HTTP answer to \(method) \(target)") }
        let head = String(decoding: response[..<split.lowerBound], as: UTF8.self)
        let parts = head.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let status = Int(parts[1]) else { throw ServerHarness.Failure("no status in '\(head.prefix(80))'") }
        var bodyBytes = Array(response[split.upperBound...])
        if head.lowercased().contains("transfer-encoding: chunked") { bodyBytes = dechunk(bodyBytes) }
        return Answer(status: status, head: head, body: bodyBytes)
    }

    private static func dechunk(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        var index = 0
        while let lineEnd = bytes[index...].firstRange(of: [13, 10]) {
            let size = Int(String(decoding: bytes[index..<lineEnd.lowerBound], as: UTF8.self), radix: 16) ?? 0
            if size == 0 { break }
            let start = lineEnd.upperBound
            output.append(contentsOf: bytes[start..<min(start + size, bytes.count)])
            index = min(start + size + 2, bytes.count)
        }
        return output
    }
}
