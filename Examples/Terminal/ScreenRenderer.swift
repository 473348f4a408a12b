/// Draws a screen's lines as one write of ANSI text: each row from its start, cut at the width, the rest
/// of the row and of the screen cleared, and the cursor left where the app wants it (or hidden).
public enum ScreenRenderer {
    public static func render(_ lines: [Line], width: Int, height: Int, cursor: (row: Int, column: Int)?) -> String {
        var out = "\u{1B}[?25l\u{1B}[H"
        for (row, line) in lines.prefix(height).enumerated() {
            if row > 0 { out += "\r\n" }
            var remaining = max(0, width)
            for span in line.spans where remaining > 0 {
                let text = String(span.text.filter { !$0.isNewline && $0 != "\t" && $0 != "\u{1B}" }.prefix(remaining))
                remaining -= text.count
                let escape = span.style.escape
                out += escape.isEmpty ? text : escape + text + "\u{1B}[0m"
            }
            out += "\u{1B}[K"
        }
        out += "\u{1B}[J"
        if let cursor {
            out += "\u{1B}[\(cursor.row + 1);\(cursor.column + 1)H\u{1B}[?25h"
        }
        return out
    }
}
