/// How `Node.json(_:)` renders a node.
///
///     node.json(.rest)              // REST GET without format=export: no priorities, arrays
///     node.json(.export)            // WebSocket wire form and format=export: priorities, no arrays
///     node.json(.pretty(.rest))     // print=pretty
public struct JSONFormat: Sendable, Hashable {
    /// Write priorities: `".priority"` after a node's children, and a prioritized leaf as
    /// `{".value": v, ".priority": p}` (docs/protocol.md §5.3, §6.4 `format=export`).
    public var includePriorities: Bool
    /// Render objects whose keys are all array indices, with the largest below twice the count,
    /// as arrays with `null` in the gaps (docs/protocol.md §5.4). Never applied to a node whose
    /// priority is being written, since an array has nowhere to put it.
    public var arrays: Bool
    /// Indent by two spaces, one member per line (docs/protocol.md §6.4 `print=pretty`).
    public var pretty: Bool
    /// Write every double so that it parses back as a double: one at or beyond 2^53 has no fraction,
    /// and JavaScript's form of it (`1500000000000000000`) would parse as an integer, so it gets `.0`.
    /// For storage that must give back exactly what it was given; clients never see this.
    public var exactNumbers = false

    /// A format with each option spelled out.
    public init(includePriorities: Bool, arrays: Bool, pretty: Bool = false) {
        self.includePriorities = includePriorities
        self.arrays = arrays
        self.pretty = pretty
    }

    /// REST output without `format=export`: what the JS SDK's `val()` would give.
    public static let rest = JSONFormat(includePriorities: false, arrays: true)

    /// Export form: priorities included, objects never turned into arrays. Also the form of data
    /// on the WebSocket wire (docs/protocol.md §3.1) and of `format=export` REST responses.
    public static let export = JSONFormat(includePriorities: true, arrays: false)

    /// The export form with ``exactNumbers``: what storage writes when it keeps nodes as JSON.
    public static let lossless: JSONFormat = {
        var format = JSONFormat.export
        format.exactNumbers = true
        return format
    }()

    /// `base` indented for people (`print=pretty`).
    public static func pretty(_ base: JSONFormat = .rest) -> JSONFormat {
        var format = base
        format.pretty = true
        return format
    }
}
