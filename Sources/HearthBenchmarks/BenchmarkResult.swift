/// The outcome of one scenario, printed as the scenario's last output line: one JSON object that scripts and
/// docs/BENCHMARKS.md read.
///
/// ```
/// {"scenario":"core.parse","metric":"parse throughput","value":212.4,"unit":"MB/s",
///  "reference":"Foundation.JSONSerialization","referenceValue":31.2,"ratio":6.808}
/// ```
///
/// `ratio` is `value / referenceValue`: above 1 means Hearth's number is larger than the reference's, which is
/// better for a throughput and worse for a memory size. `reference`, `referenceValue` and `ratio` are `null`
/// when the scenario has no side-by-side reference (the reference scenarios themselves).
struct BenchmarkResult: Equatable {
    static func == (lhs: BenchmarkResult, rhs: BenchmarkResult) -> Bool { lhs.jsonLine == rhs.jsonLine }

    let scenario: String
    let metric: String
    let value: Double
    let unit: String
    let reference: String?
    let referenceValue: Double?
    /// More numbers of the same run (a second metric, latencies), appended after `ratio` in this order.
    var extras: [(name: String, value: Double)] = []

    init(
        scenario: String, metric: String, value: Double, unit: String,
        reference: String? = nil, referenceValue: Double? = nil, extras: [(name: String, value: Double)] = []
    ) {
        self.extras = extras
        self.scenario = scenario
        self.metric = metric
        self.value = value
        self.unit = unit
        self.reference = reference
        self.referenceValue = referenceValue
    }

    var ratio: Double? {
        guard let referenceValue, referenceValue != 0 else { return nil }
        return value / referenceValue
    }

    /// The result as one line of JSON, keys in a fixed order so that lines diff well.
    var jsonLine: String {
        let fields = [
            ("scenario", jsonString(scenario)),
            ("metric", jsonString(metric)),
            ("value", jsonNumber(value, places: 3)),
            ("unit", jsonString(unit)),
            ("reference", reference.map(jsonString) ?? "null"),
            ("referenceValue", referenceValue.map { jsonNumber($0, places: 3) } ?? "null"),
            ("ratio", ratio.map { jsonNumber($0, places: 3) } ?? "null"),
        ] + extras.map { ($0.name, jsonNumber($0.value, places: 3)) }
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    private func jsonNumber(_ number: Double, places: Int) -> String {
        guard number.isFinite else { return "null" }  // JSON has no NaN or infinity.
        let value = rounded(number, places: places)
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    private func jsonString(_ string: String) -> String {
        var escaped = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                escaped += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped + "\""
    }
}
