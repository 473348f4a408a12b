import Foundation

/// Foundation's `JSONSerialization`: the JSON parser a Swift program on Linux has without Hearth, and the
/// side-by-side reference that `core.parse` reports its throughput against.
enum JSONSerializationReference {
    /// The name that results give in their `reference` field.
    static let name = "Foundation.JSONSerialization"

    /// Parses `data` the way a Foundation user would, with fragments allowed at the top level.
    static func parse(_ data: Data) throws -> Any {
        try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
    }

    /// Measures parsing `document` (warm-up plus the configured runs) and returns the run times.
    ///
    /// The copy into `Data` happens once, outside the timed runs, so only the parse is measured.
    static func measureParse(_ document: [UInt8], in context: BenchmarkContext) throws -> Measurement {
        let data = Data(document)
        return try context.measure(name, bytes: document.count) { blackHole(try parse(data)) }
    }
}

extension Scenario {
    /// Parse throughput of `JSONSerialization` alone, so that its number can be read and recorded by itself.
    static let referenceJSONSerialization = Scenario(
        name: "reference.jsonserialization",
        summary: "Foundation JSONSerialization parses the generated Firebase-style document"
    ) { context in
        let document = context.document()
        let measurement = try JSONSerializationReference.measureParse(document, in: context)
        return BenchmarkResult(
            scenario: "reference.jsonserialization", metric: "parse throughput",
            value: measurement.megabytesPerSecond(processing: document.count), unit: "MB/s")
    }
}
