/// The regular-expression subset of `matches()` (docs/rules.md §6.5), compiled once at load time and
/// run as a Thompson NFA: time is linear in the input for any pattern, so no pattern can make an
/// evaluation slow (a backtracking matcher would let `/(a*)*b/` run for ever).
struct RuleRegex: Sendable {
    private let program: [Instruction]
    /// Instructions in the compiled pattern: how many threads can be live per character matched.
    var instructionCount: Int { program.count }
    private let start: Int
    private let anchoredStart: Bool
    private let anchoredEnd: Bool
    private let caseInsensitive: Bool

    enum Instruction: Sendable {
        case scalar(Unicode.Scalar)
        case any
        case set(CharacterSet)
        case split(Int, Int)
        case jump(Int)
        case match
    }

    /// Builds the matcher; a pattern outside the subset throws with an offset into the pattern.
    init(pattern: String, flags: String) throws(ExpressionError) {
        for flag in flags.unicodeScalars where flag != "i" {
            throw ExpressionError(offset: 0, "Unsupported regular expression flag '\(flag)': only 'i' is allowed.", text: flags)
        }
        if flags.unicodeScalars.count > 1 {
            throw ExpressionError(offset: 0, "Repeated regular expression flag.", text: flags)
        }
        caseInsensitive = flags == "i"
        var scalars = Array(pattern.unicodeScalars)
        var anchoredStart = false, anchoredEnd = false
        if scalars.first == "^" {
            anchoredStart = true
            scalars.removeFirst()
        }
        if scalars.last == "$" {
            // `\$` at the end is a literal dollar: count the backslashes before it.
            var backslashes = 0
            var i = scalars.count - 2
            while i >= 0 && scalars[i] == "\\" {
                backslashes += 1
                i -= 1
            }
            if backslashes % 2 == 0 {
                anchoredEnd = true
                scalars.removeLast()
            }
        }
        self.anchoredStart = anchoredStart
        self.anchoredEnd = anchoredEnd
        var parser = RegexParser(scalars: scalars, caseInsensitive: caseInsensitive, offsetBase: anchoredStart ? 1 : 0)
        let tree = try parser.parseAll()
        var builder = ProgramBuilder()
        try builder.emit(tree)
        builder.program.append(.match)
        if builder.program.count > RulesLimits.maxRegexStates {
            throw ExpressionError(offset: 0, "The regular expression is too large.", text: pattern)
        }
        program = builder.program
        start = 0
    }

    /// True when the pattern matches somewhere in `text` (anywhere, unless anchored).
    func matches(_ text: String) -> Bool {
        let input = Array(text.unicodeScalars)
        var current = ThreadList(capacity: program.count)
        var next = ThreadList(capacity: program.count)
        var generation = 1
        var marks = [Int](repeating: 0, count: program.count)

        func add(_ pc: Int, to list: inout ThreadList, at position: Int) -> Bool {
            // Returns true when this closure reaches `match` at an acceptable position.
            var stack = [pc]
            var matched = false
            while let pc = stack.popLast() {
                if marks[pc] == generation { continue }
                marks[pc] = generation
                switch program[pc] {
                case .jump(let target): stack.append(target)
                case .split(let a, let b):
                    stack.append(b)
                    stack.append(a)
                case .match:
                    if !anchoredEnd || position == input.count { matched = true }
                default: list.append(pc)
                }
            }
            return matched
        }

        if add(start, to: &current, at: 0) { return true }
        var position = 0
        while position < input.count {
            let c = input[position]
            generation += 1
            next.removeAll()
            var matched = false
            for pc in current.items {
                if accepts(program[pc], c), add(pc + 1, to: &next, at: position + 1) { matched = true }
            }
            if matched { return true }
            if !anchoredStart, add(start, to: &next, at: position + 1) { return true }
            swap(&current, &next)
            if current.items.isEmpty && anchoredStart { return false }
            position += 1
        }
        return false
    }

    private func accepts(_ instruction: Instruction, _ c: Unicode.Scalar) -> Bool {
        switch instruction {
        case .scalar(let s):
            if s == c { return true }
            return caseInsensitive && CaseFolding.fold(c) == s
        case .any:
            return c != "\n" && c != "\r" && c != "\u{2028}" && c != "\u{2029}"
        case .set(let set):
            if set.contains(c) { return true }
            guard caseInsensitive else { return false }
            return set.contains(CaseFolding.fold(c)) || set.contains(CaseFolding.upper(c))
        case .split, .jump, .match:
            return false
        }
    }

    private struct ThreadList {
        var items: [Int] = []
        init(capacity: Int) { items.reserveCapacity(capacity) }
        mutating func append(_ pc: Int) { items.append(pc) }
        mutating func removeAll() { items.removeAll(keepingCapacity: true) }
    }

    /// Regex syntax tree.
    indirect enum Node {
        case scalar(Unicode.Scalar)
        case any
        case set(CharacterSet)
        case sequence([Node])
        case alternatives([Node])
        case repetition(Node, min: Int, max: Int?)
    }

    struct ProgramBuilder {
        var program: [Instruction] = []

        mutating func emit(_ node: Node) throws(ExpressionError) {
            if program.count > RulesLimits.maxRegexStates {
                throw ExpressionError(offset: 0, "The regular expression is too large.")
            }
            switch node {
            case .scalar(let s): program.append(.scalar(s))
            case .any: program.append(.any)
            case .set(let set): program.append(.set(set))
            case .sequence(let items):
                for item in items { try emit(item) }
            case .alternatives(let branches):
                // split L1, next; L1: branch; jump end; next: split ...
                var jumps: [Int] = []
                for (i, branch) in branches.enumerated() {
                    if i < branches.count - 1 {
                        let split = program.count
                        program.append(.split(split + 1, -1))
                        try emit(branch)
                        jumps.append(program.count)
                        program.append(.jump(-1))
                        program[split] = .split(split + 1, program.count)
                    } else {
                        try emit(branch)
                    }
                }
                for j in jumps { program[j] = .jump(program.count) }
            case .repetition(let inner, let min, let max):
                for _ in 0..<min { try emit(inner) }
                if let max {
                    // Each optional copy may be skipped to the end.
                    var splits: [Int] = []
                    for _ in min..<max {
                        splits.append(program.count)
                        program.append(.split(program.count + 1, -1))
                        try emit(inner)
                    }
                    for s in splits { program[s] = .split(s + 1, program.count) }
                } else {
                    // L: split body, end; body; jump L
                    let loop = program.count
                    program.append(.split(loop + 1, -1))
                    try emit(inner)
                    program.append(.jump(loop))
                    program[loop] = .split(loop + 1, program.count)
                }
            }
        }
    }
}

/// A set of Unicode scalars given by ranges, possibly negated.
struct CharacterSet: Sendable {
    var ranges: [ClosedRange<UInt32>] = []
    var negated = false

    func contains(_ c: Unicode.Scalar) -> Bool {
        var found = false
        for range in ranges where range.contains(c.value) {
            found = true
            break
        }
        return found != negated
    }

    static let digits = CharacterSet(ranges: [0x30...0x39])
    static let word = CharacterSet(ranges: [0x30...0x39, 0x41...0x5A, 0x5F...0x5F, 0x61...0x7A])
    /// JavaScript's `\s`: white space and line terminators.
    static let space = CharacterSet(ranges: [
        0x09...0x0D, 0x20...0x20, 0xA0...0xA0, 0x1680...0x1680, 0x2000...0x200A, 0x2028...0x2029,
        0x202F...0x202F, 0x205F...0x205F, 0x3000...0x3000, 0xFEFF...0xFEFF,
    ])

    func inverted() -> CharacterSet { CharacterSet(ranges: ranges, negated: !negated) }
}

/// Simple one-scalar case mapping for the `i` flag.
enum CaseFolding {
    static func fold(_ c: Unicode.Scalar) -> Unicode.Scalar {
        if c.isASCII {
            return ("A"..."Z").contains(c) ? Unicode.Scalar(c.value + 32)! : c
        }
        let lower = c.properties.lowercaseMapping.unicodeScalars
        return lower.count == 1 ? lower.first! : c
    }

    static func upper(_ c: Unicode.Scalar) -> Unicode.Scalar {
        if c.isASCII {
            return ("a"..."z").contains(c) ? Unicode.Scalar(c.value - 32)! : c
        }
        let upper = c.properties.uppercaseMapping.unicodeScalars
        return upper.count == 1 ? upper.first! : c
    }
}

/// Parses the pattern between the anchors into `RuleRegex.Node`.
struct RegexParser {
    let scalars: [Unicode.Scalar]
    let caseInsensitive: Bool
    let offsetBase: Int
    var index = 0
    var depth = 0

    init(scalars: [Unicode.Scalar], caseInsensitive: Bool, offsetBase: Int) {
        self.scalars = scalars
        self.caseInsensitive = caseInsensitive
        self.offsetBase = offsetBase
    }

    private var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

    private func error(_ message: String) -> ExpressionError {
        ExpressionError(offset: 0, message + " (at pattern position \(index + offsetBase + 1))", text: String(String.UnicodeScalarView(scalars)))
    }

    mutating func parseAll() throws(ExpressionError) -> RuleRegex.Node {
        if scalars.isEmpty { throw error("Empty regular expression.") }
        let node = try parseAlternatives()
        if index < scalars.count { throw error("Unmatched ')' in regular expression.") }
        return node
    }

    private mutating func parseAlternatives() throws(ExpressionError) -> RuleRegex.Node {
        var branches: [RuleRegex.Node] = []
        while true {
            let branch = try parseSequence()
            if case .sequence(let items) = branch, items.isEmpty {
                throw error("Empty alternative in regular expression.")
            }
            branches.append(branch)
            if current == "|" {
                index += 1
                continue
            }
            return branches.count == 1 ? branches[0] : .alternatives(branches)
        }
    }

    private mutating func parseSequence() throws(ExpressionError) -> RuleRegex.Node {
        var items: [RuleRegex.Node] = []
        while let c = current, c != "|", c != ")" {
            var atom = try parseAtom()
            atom = try parseQuantifiers(atom)
            items.append(atom)
        }
        return items.count == 1 ? items[0] : .sequence(items)
    }

    private mutating func parseQuantifiers(_ atom: RuleRegex.Node) throws(ExpressionError) -> RuleRegex.Node {
        var node = atom
        var quantified = false
        while let c = current {
            var bounds: (Int, Int?)?
            switch c {
            case "*": bounds = (0, nil)
            case "+": bounds = (1, nil)
            case "?": bounds = (0, 1)
            case "{": bounds = braceQuantifier()
            default: break
            }
            guard let (min, max) = bounds else { break }
            if quantified { throw error("Nothing to repeat in regular expression.") }
            if c != "{" { index += 1 }
            if current == "?" { index += 1 }  // lazy: the same yes/no answer
            if let max, max < min { throw error("Repetition bounds out of order in regular expression.") }
            if min > RulesLimits.maxRegexRepeat || (max ?? 0) > RulesLimits.maxRegexRepeat {
                throw error("Repetition count above \(RulesLimits.maxRegexRepeat) in regular expression.")
            }
            node = .repetition(node, min: min, max: max)
            quantified = true
        }
        return node
    }

    /// `{n}`, `{n,}` or `{n,m}` at the current position, consumed; nil (nothing consumed) when the
    /// brace does not start one and is then a literal `{`.
    private mutating func braceQuantifier() -> (Int, Int?)? {
        var i = index + 1
        func number() -> Int? {
            var value = 0, digits = 0
            while i < scalars.count, ("0"..."9").contains(scalars[i]) {
                value = min(value * 10 + Int(scalars[i].value - 48), 1_000_000)
                digits += 1
                i += 1
            }
            return digits > 0 ? value : nil
        }
        guard let low = number() else { return nil }
        var high: Int? = low
        if i < scalars.count, scalars[i] == "," {
            i += 1
            high = number()
        }
        guard i < scalars.count, scalars[i] == "}" else { return nil }
        index = i + 1
        return (low, high)
    }

    private mutating func parseAtom() throws(ExpressionError) -> RuleRegex.Node {
        let c = current!
        switch c {
        case "(":
            index += 1
            if current == "?" { throw error("Group modifiers '(?' are not supported in regular expressions.") }
            depth += 1
            if depth > RulesLimits.maxExpressionDepth { throw error("Regular expression nests too deeply.") }
            let inner = try parseAlternatives()
            depth -= 1
            guard current == ")" else { throw error("Unclosed '(' in regular expression.") }
            index += 1
            if case .sequence(let items) = inner, items.isEmpty { throw error("Empty group in regular expression.") }
            return inner
        case "[":
            return .set(try parseSet())
        case ".":
            index += 1
            return .any
        case "\\":
            return try parseEscape(inSet: false)
        case "^", "$":
            throw error("'\(c)' is only allowed as the first ('^') or last ('$') character of a regular expression.")
        case "*", "+", "?":
            throw error("Nothing to repeat in regular expression.")
        default:
            index += 1
            return literal(c)
        }
    }

    private func literal(_ c: Unicode.Scalar) -> RuleRegex.Node {
        .scalar(caseInsensitive ? CaseFolding.fold(c) : c)
    }

    /// `\d \w \s \D \W \S`, or any other escaped character standing for itself.
    private mutating func parseEscape(inSet: Bool) throws(ExpressionError) -> RuleRegex.Node {
        index += 1
        guard let e = current else { throw error("Regular expression ends with '\\'.") }
        index += 1
        switch e {
        case "d": return .set(.digits)
        case "w": return .set(.word)
        case "s": return .set(.space)
        case "D": return .set(CharacterSet.digits.inverted())
        case "W": return .set(CharacterSet.word.inverted())
        case "S": return .set(CharacterSet.space.inverted())
        default: return literal(e)
        }
    }

    private mutating func parseSet() throws(ExpressionError) -> CharacterSet {
        index += 1  // [
        var set = CharacterSet()
        if current == "^" {
            set.negated = true
            index += 1
        }
        var first = true
        while true {
            guard let c = current else { throw error("Unclosed '[' in regular expression.") }
            if c == "]" && !first {
                index += 1
                return set
            }
            first = false
            let low: Unicode.Scalar
            if c == "\\" {
                let escaped = try parseEscape(inSet: true)
                switch escaped {
                case .set(let inner):
                    // A class inside a set; negated classes inside sets are rare: take their ranges' complement.
                    set.ranges.append(contentsOf: inner.negated ? Self.complement(inner.ranges) : inner.ranges)
                    continue
                case .scalar(let s): low = s
                default: continue
                }
            } else {
                index += 1
                low = c
            }
            // A range `a-z` (a `-` before `]` is literal).
            if current == "-", index + 1 < scalars.count, scalars[index + 1] != "]" {
                index += 1
                var high: Unicode.Scalar
                if current == "\\" {
                    guard case .scalar(let s) = try parseEscape(inSet: true) else {
                        throw error("Invalid range in a regular expression set.")
                    }
                    high = s
                } else {
                    high = current!
                    index += 1
                }
                if caseInsensitive { high = CaseFolding.fold(high) }
                let lowValue = (caseInsensitive ? CaseFolding.fold(low) : low).value
                guard lowValue <= high.value else { throw error("Range out of order in a regular expression set.") }
                set.ranges.append(lowValue...high.value)
                if caseInsensitive {
                    // The upper-case images of a range need not be in order (`[_-a]`): add them only when they are.
                    let upperLow = CaseFolding.upper(Unicode.Scalar(lowValue)!).value, upperHigh = CaseFolding.upper(high).value
                    if upperLow <= upperHigh { set.ranges.append(upperLow...upperHigh) }
                }
            } else {
                let value = (caseInsensitive ? CaseFolding.fold(low) : low).value
                set.ranges.append(value...value)
            }
        }
    }

    private static func complement(_ ranges: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
        var result: [ClosedRange<UInt32>] = []
        var next: UInt32 = 0
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if range.lowerBound > next { result.append(next...(range.lowerBound - 1)) }
            next = max(next, range.upperBound + 1)
        }
        if next <= 0x10FFFF { result.append(next...0x10FFFF) }
        return result
    }
}
