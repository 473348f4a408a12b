/// How a piece of text looks.
public struct Style: Equatable, Sendable {
    public enum Color: Int, Sendable { case red = 31, green = 32, yellow = 33, blue = 34, magenta = 35, cyan = 36, gray = 90 }
    public var bold = false
    public var dim = false
    public var reverse = false
    public var color: Color?

    public init(bold: Bool = false, dim: Bool = false, reverse: Bool = false, color: Color? = nil) {
        self.bold = bold
        self.dim = dim
        self.reverse = reverse
        self.color = color
    }

    public static let plain = Style()
    public static let bold = Style(bold: true)
    public static let dim = Style(dim: true)
    public static let reverse = Style(reverse: true)
    public static let error = Style(bold: true, color: .red)
    public static let good = Style(color: .green)
    public static let accent = Style(bold: true, color: .cyan)
    public static let warning = Style(color: .yellow)

    /// The SGR sequence that sets this style from the default.
    var escape: String {
        var codes: [String] = []
        if bold { codes.append("1") }
        if dim { codes.append("2") }
        if reverse { codes.append("7") }
        if let color { codes.append(String(color.rawValue)) }
        return codes.isEmpty ? "" : "\u{1B}[" + codes.joined(separator: ";") + "m"
    }
}

/// Text in one style.
public struct Span: Equatable, Sendable {
    public var text: String
    public var style: Style

    public init(_ text: String, _ style: Style = .plain) {
        self.text = text
        self.style = style
    }
}

/// One row of the screen.
public struct Line: Equatable, Sendable, ExpressibleByStringLiteral {
    public var spans: [Span]

    public init(_ spans: [Span] = []) { self.spans = spans }
    public init(_ text: String, _ style: Style = .plain) { spans = [Span(text, style)] }
    public init(stringLiteral text: String) { spans = [Span(text)] }

    public static let blank = Line()

    /// The characters shown, without styles (what tests and screen readers see).
    public var text: String { spans.map(\.text).joined() }

    public static func + (line: Line, span: Span) -> Line { Line(line.spans + [span]) }
}

/// Splits `text` into lines of at most `width` characters, at spaces where it can.
public func wrap(_ text: String, width: Int) -> [String] {
    guard width > 0 else { return [] }
    var lines: [String] = []
    for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
        var current = ""
        for word in paragraph.split(separator: " ", omittingEmptySubsequences: false) {
            var word = Substring(word)
            while word.count > width {
                if !current.isEmpty { lines.append(current); current = "" }
                lines.append(String(word.prefix(width)))
                word = word.dropFirst(width)
            }
            if current.isEmpty {
                current = String(word)
            } else if current.count + 1 + word.count <= width {
                current += " " + word
            } else {
                lines.append(current)
                current = String(word)
            }
        }
        lines.append(current)
    }
    return lines
}
