/// One token of a rule expression. `start`/`end` are Unicode scalar offsets into the expression.
struct Token: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case number(Double)
        case string(String)
        case identifier(String)
        /// `/pattern/flags`
        case regex(pattern: String, flags: String)
        /// An operator or punctuation mark: `.`, `(`, `===`, `&&`, ...
        case symbol(String)
        case end
    }

    var kind: Kind
    var start: Int
    var end: Int

    func isSymbol(_ symbol: String) -> Bool {
        if case .symbol(let s) = kind { return s == symbol }
        return false
    }

    /// How the token reads in a message.
    var display: String {
        switch kind {
        case .number(let n): return JSNumber.string(n)
        case .string(let s): return "'\(s)'"
        case .identifier(let name): return name
        case .regex(let pattern, let flags): return "/\(pattern)/\(flags)"
        case .symbol(let s): return s
        case .end: return "end of expression"
        }
    }
}
