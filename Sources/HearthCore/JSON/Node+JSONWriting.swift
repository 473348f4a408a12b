extension Node {
    /// The node as JSON text; the empty node is `null`.
    ///
    ///     Node(["a": Node(1), "b": Node("x")]).json()   // {"a":1,"b":"x"}
    public func json(_ format: JSONFormat = .rest) -> String {
        var bytes: [UInt8] = []
        appendJSON(to: &bytes, format: format)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the node as UTF-8 JSON to `bytes`, for callers assembling a larger message.
    ///
    ///     var body: [UInt8] = []
    ///     node.appendJSON(to: &body, format: .export)
    public func appendJSON(to bytes: inout [UInt8], format: JSONFormat = .rest) {
        var writer = JSONWriter(output: bytes, format: format)
        bytes = []  // hand the buffer over so appends do not copy it
        writer.write(self, indent: 0)
        bytes = writer.output
    }
}
