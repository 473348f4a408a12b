import HearthCore

/// The JSON codec (REST bodies, realtime data, imports): any bytes parse or throw; what parses writes
/// back to text that parses to itself again, with and without write validation.
enum JSONFuzzing {
    static let target = FuzzTarget(name: "json", input: "a JSON document", run: run)

    static func run(_ bytes: [UInt8]) {
        let validated = try? Node(jsonBytes: bytes, options: .init(validation: .write(at: Path("fuzz/at"))))
        guard let node = try? Node(jsonBytes: bytes) else {
            fuzzCheck(validated == nil, "a document valid for a write failed to parse without validation")
            return
        }
        for format in [JSONFormat.rest, .export] {
            let text = node.json(format)
            guard let again = try? Node(json: text) else { return fuzzCheck(false, "written JSON does not parse: \(text.prefix(200))") }
            fuzzCheck(again.json(format) == text, "writing is not stable: \(text.prefix(200))")
        }
        if let validated { fuzzCheck(validated.json(.export) == node.json(.export), "validation changed the tree") }
        _ = node.hash
    }
}
