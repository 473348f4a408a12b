import Foundation
import HearthTesting
#if canImport(Glibc)
    import Glibc
#endif

extension Scenario {
    /// REST GET and durable PUT through the real `hearth serve` with wrk over 64 keep-alive connections,
    /// against nginx serving a static file of the same bytes, interleaved run by run.
    static let restReadWrite = Scenario(
        name: "rest.rw",
        summary: "REST GET and durable PUT req/s, wrk -c64 keep-alive, against nginx serving the same bytes"
    ) { context in
        let seconds = Int(ProcessInfo.processInfo.environment["HEARTH_BENCH_WRK_SECONDS"] ?? "") ?? 5
        let connections = 64, threads = 2
        // Compact, keys in Firebase order: exactly what Hearth answers for a GET of it.
        let body = #"{"active":true,"born":1815,"name":"Ada Lovelace"}"#
        let hearth = try ServerHarness.startHearth(name: "rest-rw")
        defer {
            ServerHarness.stop(hearth.process)
            try? FileManager.default.removeItem(atPath: hearth.directory)
        }
        let status = try ServerHarness.request(port: hearth.port, "PUT", "/bench/doc.json?ns=bench", body: body)
        guard status == 200 else { throw ServerHarness.Failure("PUT of the GET document answered \(status)") }

        // nginx: one worker on loopback, a temporary configuration, the same bytes as a static file.
        let nginxBinary = try ServerHarness.tool("nginx", package: "nginx-light")
        let nginxDirectory = hearth.directory + "/nginx"
        try? FileManager.default.createDirectory(atPath: nginxDirectory + "/root/bench", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: nginxDirectory + "/root/bench/doc.json", contents: Data(body.utf8))
        for path in [nginxDirectory, nginxDirectory + "/root", nginxDirectory + "/root/bench"] { chmod(path, 0o755) }
        let nginxPort = Loopback.freePort()
        let configuration = """
            worker_processes 1;
            daemon off;
            master_process off;
            pid \(nginxDirectory)/nginx.pid;
            error_log \(nginxDirectory)/error.log error;
            events { worker_connections 1024; }
            http {
                access_log off;
                client_body_temp_path \(nginxDirectory)/body;
                proxy_temp_path \(nginxDirectory)/proxy;
                fastcgi_temp_path \(nginxDirectory)/fastcgi;
                uwsgi_temp_path \(nginxDirectory)/uwsgi;
                scgi_temp_path \(nginxDirectory)/scgi;
                keepalive_requests 1000000;
                server {
                    listen 127.0.0.1:\(nginxPort);
                    root \(nginxDirectory)/root;
                    default_type application/json;
                }
            }

            """
        _ = FileManager.default.createFile(atPath: nginxDirectory + "/nginx.conf", contents: Data(configuration.utf8))
        let nginx = try ServerHarness.spawn(nginxBinary, ["-c", nginxDirectory + "/nginx.conf", "-e", nginxDirectory + "/error.log"], log: nginxDirectory + "/stdout.log")
        defer { ServerHarness.stop(nginx) }
        try ServerHarness.waitForListener(port: nginxPort, process: nginx)

        let script = hearth.directory + "/put.lua"
        let lua = """
            wrk.method = "PUT"
            wrk.body = '\(body)'
            wrk.headers["Content-Type"] = "application/json"
            request = function()
              return wrk.format(nil, "/bench/put/k" .. math.random(1, 1000000) .. ".json?ns=bench&print=silent")
            end

            """
        _ = FileManager.default.createFile(atPath: script, contents: Data(lua.utf8))
        let hearthURL = "http://127.0.0.1:\(hearth.port)/bench/doc.json?ns=bench"
        let nginxURL = "http://127.0.0.1:\(nginxPort)/bench/doc.json"
        let putURL = "http://127.0.0.1:\(hearth.port)/bench/put.json?ns=bench"
        print("   wrk -t\(threads) -c\(connections) -d\(seconds)s --latency; body \(body.utf8.count) bytes; runs interleaved")

        var gets: [ServerHarness.WrkResult] = [], references: [ServerHarness.WrkResult] = [], puts: [ServerHarness.WrkResult] = []
        func line(_ label: String, _ run: String, _ result: ServerHarness.WrkResult) {
            let rate = "\(Int(result.requestsPerSecond.rounded())) req/s".padding(toLength: 14, leading: true)
            print("   \(label.padding(toLength: 30)) \(run.padding(toLength: 8))\(rate)  p50 \(rounded(result.p50, places: 2)) ms  p99 \(rounded(result.p99, places: 2)) ms\(result.errors.map { "  (\($0))" } ?? "")")
        }
        for run in 0...context.configuration.measuredRunCount {
            let label = run == 0 ? "warm-up" : "run \(run)/\(context.configuration.measuredRunCount)"
            let get = try ServerHarness.wrk(url: hearthURL, connections: connections, threads: threads, seconds: seconds)
            line("Hearth GET", label, get)
            let reference = try ServerHarness.wrk(url: nginxURL, connections: connections, threads: threads, seconds: seconds)
            line("nginx GET (static file)", label, reference)
            let put = try ServerHarness.wrk(url: putURL, connections: connections, threads: threads, seconds: seconds, script: script)
            line("Hearth PUT (durable)", label, put)
            if run > 0 {
                gets.append(get)
                references.append(reference)
                puts.append(put)
            }
        }
        func median(_ results: [ServerHarness.WrkResult]) -> ServerHarness.WrkResult {
            results.sorted { $0.requestsPerSecond < $1.requestsPerSecond }[results.count / 2]
        }
        let get = median(gets), reference = median(references), put = median(puts)
        // The machine is shared: each run's GET is paired with the nginx run right after it, and the
        // median of those ratios is steadier than the ratio of the two medians.
        let pairedRatios = zip(gets, references).map { $0.requestsPerSecond / $1.requestsPerSecond }.sorted()
        let pairedRatio = pairedRatios[pairedRatios.count / 2]
        print("   GET ratio per run: \(pairedRatios.map { String(rounded($0, places: 3)) }.joined(separator: ", ")); median \(rounded(pairedRatio, places: 3))")
        line("Hearth GET", "median", get)
        line("nginx GET (static file)", "median", reference)
        line("Hearth PUT (durable)", "median", put)
        if let commits = commitLine(hearth.directory + "/hearth.log") { print("   \(commits)") }
        return BenchmarkResult(
            scenario: "rest.rw", metric: "REST GET requests per second", value: get.requestsPerSecond, unit: "req/s",
            reference: "nginx serving the same bytes as a static file", referenceValue: reference.requestsPerSecond,
            extras: [
                ("pairedRatioMedian", pairedRatio), ("putPerSecond", put.requestsPerSecond), ("getP50ms", get.p50), ("getP99ms", get.p99),
                ("putP50ms", put.p50), ("putP99ms", put.p99),
            ])
    }

    /// The last commit-statistics line hearth printed, if it prints one.
    private static func commitLine(_ log: String) -> String? {
        guard let text = try? String(contentsOfFile: log, encoding: .utf8) else { return nil }
        return text.split(separator: "\n").last { $0.contains("commits") }.map(String.init)
    }
}
