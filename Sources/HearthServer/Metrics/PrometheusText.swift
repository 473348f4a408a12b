/// Prometheus' text exposition format (version 0.0.4): `# HELP`, `# TYPE`, then one line per sample,
/// labels quoted and escaped. A value, so what `/metrics` says is tested without a server.
struct PrometheusText {
    enum Kind: String {
        case counter
        case gauge
    }

    private(set) var text = ""

    /// One metric family: its help line, its type, and each sample with its labels.
    mutating func family(_ name: String, _ kind: Kind, help: String, samples: [(labels: [(String, String)], value: Double)]) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(kind.rawValue)\n"
        for sample in samples {
            text += name
            if !sample.labels.isEmpty {
                text += "{" + sample.labels.map { "\($0.0)=\"\(Self.escape($0.1))\"" }.joined(separator: ",") + "}"
            }
            text += " " + Self.format(sample.value) + "\n"
        }
    }

    mutating func family(_ name: String, _ kind: Kind, help: String, value: Double) {
        family(name, kind, help: help, samples: [([], value)])
    }

    /// Backslash, double quote and newline escaped, as the format requires inside label values.
    static func escape(_ value: String) -> String {
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// Integers without a fraction; others as Swift prints them.
    static func format(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return value.isNaN ? "NaN" : "\(value)"
    }
}
