import HearthProtocol
import HearthSupport

/// `GET /metrics`: the server's counters and the gauges of the moment in Prometheus' text format, for
/// admins only (the admin token, or `owner` in emulator mode: Prometheus sends it as a bearer token).
struct MetricsEndpoint {
    let metrics: ServerMetrics
    let registry: NamespaceRegistry
    let longPolls: Int
    let now: Int64
    let node: String
    let heapInUse: (@Sendable () -> Int?)?

    func render() -> String {
        var text = PrometheusText()
        text.family("hearth_build_info", .gauge, help: "Hearth's version.", samples: [([("version", HearthVersion.string)], 1)])
        text.family("hearth_node_info", .gauge, help: "This node's name (hearth serve --node).", samples: [([("node", node)], 1)])
        text.family("hearth_uptime_seconds", .gauge, help: "Seconds since the server started.",
                    value: Double(max(0, now - metrics.startedAt)) / 1000)
        if let heap = heapInUse?() {
            text.family("hearth_heap_bytes", .gauge, help: "Bytes allocated and not freed (the allocator's own count; resident memory also holds freed pages it keeps).",
                        value: Double(heap))
        }
        let namespaces = Array(registry.all).sorted { $0.name < $1.name }
        text.family("hearth_namespaces_open", .gauge, help: "Namespaces (databases) loaded.", value: Double(namespaces.count))
        text.family("hearth_realtime_connections", .gauge, help: "Open realtime connections (WebSocket and long-poll), by namespace.",
                    samples: namespaces.map { ([("namespace", $0.name)], Double($0.listeners.realtimeSessionCount)) })
        text.family("hearth_long_poll_connections", .gauge, help: "Open long-poll connections.", value: Double(longPolls))
        text.family("hearth_sse_streams", .gauge, help: "Open REST event streams, by namespace.",
                    samples: namespaces.map { ([("namespace", $0.name)], Double($0.streams.count)) })
        text.family("hearth_subscriptions", .gauge, help: "Realtime listens and SSE streams fan-out delivers to, by namespace.",
                    samples: namespaces.map { ([("namespace", $0.name)], Double($0.listeners.subscriptionCount)) })
        text.family("hearth_storage_bytes", .gauge, help: "Bytes of a namespace's files on disk.",
                    samples: namespaces.map { ([("namespace", $0.name)], Double(registry.storedBytes($0.name))) })
        text.family("hearth_http_requests_total", .counter, help: "HTTP requests routed (REST, auth, long-poll, files).",
                    value: Double(metrics.httpRequests))
        text.family("hearth_reads_total", .counter, help: "Reads served: REST GETs and streams, realtime listens and gets.",
                    samples: ServerMetrics.Channel.allCases.map { ([("protocol", $0.rawValue)], Double(metrics.reads[$0] ?? 0)) })
        text.family("hearth_writes_total", .counter, help: "Writes committed, by the protocol that sent them.",
                    samples: ServerMetrics.Channel.allCases.map { ([("protocol", $0.rawValue)], Double(metrics.writes[$0] ?? 0)) })
        text.family("hearth_writes_resent_total", .counter,
                    help: "Writes a client sent again (the same write ID) after they were applied or while they were: answered, not applied again.",
                    value: Double(metrics.resentWrites))
        let reasons = ["invalid", "permission_denied", "stale", "storage"]
        text.family("hearth_write_failures_total", .counter, help: "Writes not made, by reason.",
                    samples: reasons.map { ([("reason", $0)], Double(metrics.writeFailures[$0] ?? 0)) })
        text.family("hearth_storage_errors_total", .counter, help: "Writes storage could not make durable, by its error (DISK_FULL, IO_ERROR, UNAVAILABLE...).",
                    samples: metrics.storageErrors.keys.sorted().map { ([("code", $0)], Double(metrics.storageErrors[$0] ?? 0)) })
        text.family("hearth_checkpoint_failures_total", .counter,
                    help: "Checkpoints of a namespace's write-ahead log into its file that failed (nothing lost; the log grows).",
                    samples: namespaces.map { ([("namespace", $0.name)], Double($0.database.engine.checkpointFailures.count)) })
        text.family("hearth_deliveries_total", .counter, help: "Messages fan-out queued to listeners (SSE events, realtime pushes).",
                    value: Double(metrics.deliveries))
        text.family("hearth_delivered_bytes_total", .counter, help: "Bytes of those messages.", value: Double(metrics.deliveredBytes))
        return text.text
    }

    func response() -> HTTPResponse {
        HTTPResponse(
            status: 200, headers: [("content-type", "text/plain; version=0.0.4; charset=utf-8"), ("cache-control", "no-cache")],
            body: Array(render().utf8))
    }
}
