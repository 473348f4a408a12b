import Foundation
import HearthCLI
import HearthCore

extension Scenario {
    /// Parse the generated document into a tree, against JSONSerialization on the same bytes, their runs
    /// alternating. A run includes freeing what it parsed, on both sides.
    static let coreParse = Scenario(name: "core.parse", summary: "Parse the 25 MB document into a Node") { context in
        let document = context.document()
        let data = Data(document)  // once, untimed, so the reference's runs time only its parse
        let (hearth, reference) = try document.withUnsafeBytes { bytes in
            try context.measureAlternating(
                "HearthCore", { blackHole(try Node(jsonBytes: bytes)) },
                against: JSONSerializationReference.name, { blackHole(try JSONSerializationReference.parse(data)) },
                bytes: document.count)
        }
        return BenchmarkResult(
            scenario: "core.parse", metric: "parse throughput",
            value: hearth.megabytesPerSecond(processing: document.count), unit: "MB/s",
            reference: JSONSerializationReference.name,
            referenceValue: reference.megabytesPerSecond(processing: document.count))
    }

    /// Serialize the parsed tree back to compact JSON, against JSONSerialization writing its own parse.
    static let coreSerialize = Scenario(name: "core.serialize", summary: "Serialize the tree to compact JSON") { context in
        let document = context.document()
        let tree = try Node(jsonBytes: document)
        var output: [UInt8] = []
        output.reserveCapacity(document.count + document.count / 8)
        let foundationObject = try JSONSerializationReference.parse(Data(document))
        let (hearth, reference) = try context.measureAlternating(
            "HearthCore",
            {
                output.removeAll(keepingCapacity: true)
                tree.appendJSON(to: &output, format: .rest)
                blackHole(output)
            },
            against: JSONSerializationReference.name,
            { blackHole(try JSONSerialization.data(withJSONObject: foundationObject, options: [.fragmentsAllowed])) },
            bytes: document.count)
        return BenchmarkResult(
            scenario: "core.serialize", metric: "serialize throughput",
            value: hearth.megabytesPerSecond(processing: document.count), unit: "MB/s",
            reference: JSONSerializationReference.name,
            referenceValue: reference.megabytesPerSecond(processing: document.count))
    }

    /// Memory held by the parsed tree, against the compact JSON size.
    ///
    /// Counts the heap bytes in use (`ProcessHeap.mainArenaBytesInUse()`, glibc's `mallinfo2`) before and after parsing, so
    /// memory freed earlier in the process and kept by malloc cannot hide any of the tree; the
    /// resident-set growth is printed beside it.
    static let coreMemory = Scenario(name: "core.memory", summary: "Heap bytes held by the parsed 25 MB document") { context in
        let document = context.document()
        let compact = try Node(jsonBytes: document).json(.export).utf8.count
        ProcessHeap.trim()
        let heapBefore = ProcessHeap.mainArenaBytesInUse(), residentBefore = ProcessMemory.residentBytes() ?? 0
        let tree = try Node(jsonBytes: document)
        let heapAfter = ProcessHeap.mainArenaBytesInUse(), residentAfter = ProcessMemory.residentBytes() ?? 0
        let treeBytes = Double(heapAfter - heapBefore)
        print("   tree: \(tree.leafCount) leaves; heap +\(rounded(treeBytes / 1e6, places: 1)) MB, resident +\(rounded(Double(residentAfter - residentBefore) / 1e6, places: 1)) MB; compact JSON \(rounded(Double(compact) / 1e6, places: 1)) MB")
        blackHole(tree)
        return BenchmarkResult(
            scenario: "core.memory", metric: "heap bytes held by the tree", value: treeBytes / 1e6, unit: "MB",
            reference: "compact JSON size", referenceValue: Double(compact) / 1e6)
    }
}
