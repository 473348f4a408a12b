/// A key the user pressed, decoded from the bytes a terminal sends in raw mode.
public enum Key: Equatable, Sendable {
    case character(Character)
    case enter, backspace, delete, tab, backTab, escape
    case up, down, left, right, home, end, pageUp, pageDown
    /// Ctrl and a letter (`ctrl("c")`); Enter, Tab and Backspace have their own cases.
    case ctrl(Character)
}

/// Turns terminal input into keys: UTF-8 text, control bytes and the escape sequences of xterm-like
/// terminals (tmux, the Linux console, macOS Terminal). Bytes may arrive split anywhere; an escape
/// sequence cut short is kept until the rest comes, and a lone ESC at the end of a read is the Esc key.
public struct KeyDecoder: Sendable {
    private var pending: [UInt8] = []

    public init() {}

    /// The keys in `bytes` (with whatever an earlier call left pending).
    public mutating func decode(_ bytes: [UInt8]) -> [Key] {
        pending += bytes
        var keys: [Key] = []
        var index = 0
        while index < pending.count {
            let byte = pending[index]
            switch byte {
            case 0x1B:
                guard index + 1 < pending.count else {
                    keys.append(.escape)
                    index += 1
                    continue
                }
                guard let (key, length) = Self.escapeSequence(pending, at: index) else {
                    // An incomplete sequence: wait for more bytes.
                    pending.removeFirst(index)
                    return keys
                }
                if let key { keys.append(key) }
                index += length
            case 0x0D, 0x0A: keys.append(.enter); index += 1
            case 0x7F, 0x08: keys.append(.backspace); index += 1
            case 0x09: keys.append(.tab); index += 1
            case 0x01...0x1A: keys.append(.ctrl(Character(Unicode.Scalar(byte + 0x60)))); index += 1
            case 0x00...0x1F: index += 1  // other control bytes mean nothing here
            default:
                let length = Self.utf8Length(byte)
                guard index + length <= pending.count else {
                    pending.removeFirst(index)
                    return keys
                }
                if let text = String(validating: pending[index..<index + length], as: UTF8.self), let character = text.first {
                    keys.append(.character(character))
                }
                index += length
            }
        }
        pending.removeAll()
        return keys
    }

    private static func utf8Length(_ lead: UInt8) -> Int {
        switch lead {
        case 0xF0...0xF7: 4
        case 0xE0...0xEF: 3
        case 0xC0...0xDF: 2
        default: 1
        }
    }

    /// The key of the escape sequence at `start` and its length; nil when the bytes end inside it. A
    /// sequence this decoder does not know is skipped (key nil).
    private static func escapeSequence(_ bytes: [UInt8], at start: Int) -> (Key?, Int)? {
        let introducer = bytes[start + 1]
        guard introducer == UInt8(ascii: "[") || introducer == UInt8(ascii: "O") else {
            // ESC then an ordinary key: Alt+key; read as Esc followed by that key.
            return (.escape, 1)
        }
        var end = start + 2
        // Parameters and intermediates, then one final byte in @...~.
        while end < bytes.count, !(0x40...0x7E).contains(bytes[end]) { end += 1 }
        guard end < bytes.count else { return nil }
        let final = bytes[end]
        let parameters = String(decoding: bytes[(start + 2)..<end], as: UTF8.self)
        let length = end - start + 1
        switch final {
        case UInt8(ascii: "A"): return (.up, length)
        case UInt8(ascii: "B"): return (.down, length)
        case UInt8(ascii: "C"): return (.right, length)
        case UInt8(ascii: "D"): return (.left, length)
        case UInt8(ascii: "H"): return (.home, length)
        case UInt8(ascii: "F"): return (.end, length)
        case UInt8(ascii: "Z"): return (.backTab, length)
        case UInt8(ascii: "~"):
            switch parameters.split(separator: ";").first {
            case "1", "7": return (.home, length)
            case "4", "8": return (.end, length)
            case "3": return (.delete, length)
            case "5": return (.pageUp, length)
            case "6": return (.pageDown, length)
            default: return (nil, length)
            }
        default: return (nil, length)
        }
    }
}
