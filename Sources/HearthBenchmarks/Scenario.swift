/// A named benchmark: what it measures, and the closure that measures it.
///
/// A scenario gets the shared ``BenchmarkContext`` (run count, the generated document, the timer) and returns
/// one ``BenchmarkResult``. Adding one takes a file in `Scenarios/` and a line in `main.swift`:
///
/// ```swift
/// extension Scenario {
///     static let coreParse = Scenario(name: "core.parse", summary: "Parse the document into a Node") { context in
///         let document = context.document()
///         let hearth = try context.measure("HearthCore") { blackHole(try parse(document)) }
///         let reference = try JSONSerializationReference.measureParse(document, in: context)
///         return BenchmarkResult(
///             scenario: "core.parse", metric: "parse throughput",
///             value: hearth.megabytesPerSecond(processing: document.count), unit: "MB/s",
///             reference: JSONSerializationReference.name,
///             referenceValue: reference.megabytesPerSecond(processing: document.count))
///     }
/// }
/// ```
struct Scenario: Sendable {
    /// Dotted name, grouped by prefix: `core.parse`, `reference.jsonserialization`.
    let name: String
    /// One line on what is measured, printed before the runs.
    let summary: String
    /// Runs the warm-up and measured runs through `context.measure` and returns the result.
    let run: @Sendable (BenchmarkContext) throws -> BenchmarkResult

    /// Whether it measures this build against `--baseline`'s (the `ab.*` scenarios).
    var comparesBuilds: Bool { name.hasPrefix("ab.") }
}

/// The settings of one `hearth-bench` invocation.
struct BenchmarkConfiguration {
    static let defaultMeasuredRunCount = 5

    /// Measured runs after the warm-up run.
    var measuredRunCount = defaultMeasuredRunCount
    /// Size of the document from ``BenchmarkContext/document()``.
    var documentByteCount = DocumentGenerator.defaultByteCount
    /// Seed of that document; the same seed gives the same bytes.
    var seed = DocumentGenerator.defaultSeed
    /// Another build's `hearth`, which the `ab.*` scenarios measure beside this one (`--baseline`).
    var baselineBinary: String?
}

/// What every scenario of one invocation shares: the configuration, the generated document and the timer.
final class BenchmarkContext {
    let configuration: BenchmarkConfiguration
    private var cachedDocument: [UInt8]?

    init(configuration: BenchmarkConfiguration) {
        self.configuration = configuration
    }

    /// The generated Firebase-style document, made once per invocation so that `core` scenarios share it.
    func document() -> [UInt8] {
        if let cachedDocument { return cachedDocument }
        let clock = ContinuousClock()
        let start = clock.now
        let document = DocumentGenerator(seed: configuration.seed).generate(byteCount: configuration.documentByteCount)
        let elapsed = clock.now - start
        print("   document: \(document.count) bytes, seed \(configuration.seed), generated in \(format(elapsed))")
        cachedDocument = document
        return document
    }

    /// Runs `body` once to warm up, then `measuredRunCount` times, printing each run's time, and returns the
    /// measured times. Pass `bytes` to also print each run's throughput.
    func measure<Failure: Error>(
        _ label: String, bytes: Int? = nil, prepare: () -> Void = {}, _ body: () throws(Failure) -> Void
    ) throws(Failure) -> Measurement {
        let clock = ContinuousClock()
        func timed() throws(Failure) -> Duration {
            prepare()  // untimed
            let start = clock.now
            try body()
            return clock.now - start
        }
        let paddedLabel = label.padding(toLength: 30)
        let warmUp = try timed()
        print("   \(paddedLabel) warm-up  \(format(warmUp, bytes: bytes))")
        var durations: [Duration] = []
        for index in 1...configuration.measuredRunCount {
            let duration = try timed()
            durations.append(duration)
            print("   \(paddedLabel) run \(index)/\(configuration.measuredRunCount)  \(format(duration, bytes: bytes))")
        }
        let measurement = Measurement(label: label, durations: durations)
        print("   \(paddedLabel) median   \(format(measurement.median, bytes: bytes))")
        return measurement
    }

    /// Like `measure`, for a body and its reference, with their runs alternating (a warm-up of each, then
    /// `measuredRunCount` rounds of one run each): on a shared machine whose speed drifts over seconds,
    /// both sides then see the same moments, and their ratio is not decided by which one ran during a
    /// slow spell. Prints each run and the median of the rounds' ratios.
    func measureAlternating<Failure: Error>(
        _ label: String, _ body: () throws(Failure) -> Void,
        against referenceLabel: String, _ reference: () throws(Failure) -> Void, bytes: Int? = nil
    ) throws(Failure) -> (Measurement, reference: Measurement) {
        let clock = ContinuousClock()
        func timed(_ run: () throws(Failure) -> Void) throws(Failure) -> Duration {
            let start = clock.now
            try run()
            return clock.now - start
        }
        let padded = (label.padding(toLength: 30), referenceLabel.padding(toLength: 30))
        print("   \(padded.0) warm-up  \(format(try timed(body), bytes: bytes))")
        print("   \(padded.1) warm-up  \(format(try timed(reference), bytes: bytes))")
        var durations: [Duration] = [], referenceDurations: [Duration] = [], ratios: [Double] = []
        let rounds = configuration.measuredRunCount
        for index in 1...rounds {
            let duration = try timed(body), referenceDuration = try timed(reference)
            durations.append(duration)
            referenceDurations.append(referenceDuration)
            ratios.append(referenceDuration.seconds / duration.seconds)
            print("   \(padded.0) run \(index)/\(rounds)  \(format(duration, bytes: bytes))")
            print("   \(padded.1) run \(index)/\(rounds)  \(format(referenceDuration, bytes: bytes))")
        }
        let measurement = Measurement(label: label, durations: durations)
        let referenceMeasurement = Measurement(label: referenceLabel, durations: referenceDurations)
        print("   \(padded.0) median   \(format(measurement.median, bytes: bytes))")
        print("   \(padded.1) median   \(format(referenceMeasurement.median, bytes: bytes))")
        let sortedRatios = ratios.sorted()
        print("   speed-up per round (reference time / \(label) time): median \(rounded(sortedRatios[sortedRatios.count / 2], places: 2)), range \(rounded(sortedRatios.first!, places: 2))–\(rounded(sortedRatios.last!, places: 2))")
        return (measurement, referenceMeasurement)
    }

    private func format(_ duration: Duration, bytes: Int? = nil) -> String {
        let text = "\(rounded(duration.seconds * 1000, places: 1)) ms".padding(toLength: 12, leading: true)
        guard let bytes else { return text }
        return "\(text)  \(rounded(Measurement.megabytes(bytes) / duration.seconds, places: 1)) MB/s"
    }
}

/// The measured run times of one labelled body.
struct Measurement {
    let label: String
    let durations: [Duration]

    /// The middle run time: less sensitive to one slow run than the mean, and to one lucky run than the fastest.
    var median: Duration {
        let sorted = durations.sorted()
        let middle = sorted.count / 2
        return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
    }

    var fastest: Duration { durations.min() ?? .zero }

    /// Throughput of the median run in MB/s, with 1 MB = 1,000,000 bytes.
    func megabytesPerSecond(processing byteCount: Int) -> Double {
        Measurement.megabytes(byteCount) / median.seconds
    }

    static func megabytes(_ byteCount: Int) -> Double { Double(byteCount) / 1_000_000 }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// Keeps the optimizer from deleting work whose result a benchmark would otherwise throw away.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// `value` rounded to `places` decimals, for printing.
func rounded(_ value: Double, places: Int) -> Double {
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    return (value * scale).rounded() / scale
}

extension String {
    func padding(toLength length: Int, leading: Bool = false) -> String {
        guard count < length else { return self }
        let pad = String(repeating: " ", count: length - count)
        return leading ? pad + self : self + pad
    }
}
