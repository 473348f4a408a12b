import Testing

@testable import HearthServer

struct PrometheusTextTests {
    @Test("Families render as Prometheus' text format, label values escaped")
    func rendersFamilies() {
        var text = PrometheusText()
        text.family("hearth_writes_total", .counter, help: "Writes committed.", samples: [([("protocol", "rest")], 12)])
        text.family("hearth_storage_bytes", .gauge, help: "Bytes.", samples: [([("namespace", "a\"b\\c\nd")], 1.5)])
        text.family("hearth_up", .gauge, help: "Up.", value: 1)
        #expect(text.text == """
            # HELP hearth_writes_total Writes committed.
            # TYPE hearth_writes_total counter
            hearth_writes_total{protocol="rest"} 12
            # HELP hearth_storage_bytes Bytes.
            # TYPE hearth_storage_bytes gauge
            hearth_storage_bytes{namespace="a\\"b\\\\c\\nd"} 1.5
            # HELP hearth_up Up.
            # TYPE hearth_up gauge
            hearth_up 1

            """)
    }
}
