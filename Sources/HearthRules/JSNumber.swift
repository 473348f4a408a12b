/// Numbers as JavaScript's `Number.prototype.toString` writes them (ECMA-262 Number::toString),
/// which is what `+` produces when it concatenates a number with a string (docs/rules.md §5.3, §9).
///
///     JSNumber.string(0.0)    // "0"
///     JSNumber.string(1.5)    // "1.5"
///     JSNumber.string(1e21)   // "1e+21"
///     JSNumber.string(.nan)   // "NaN"
enum JSNumber {
    static func string(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        if value == 0 { return "0" }
        if value < 0 { return "-" + string(-value) }
        if value < 1e15, value == value.rounded(.towardZero) { return String(Int64(value)) }
        // Swift's description gives the shortest round-trip digits; lay them out the ECMA way.
        let (digits, pointPosition) = decompose(value.description)
        let k = digits.count, n = pointPosition
        if k <= n && n <= 21 { return digits + String(repeating: "0", count: n - k) }
        if 0 < n && n <= 21 {
            let split = digits.index(digits.startIndex, offsetBy: n)
            return String(digits[..<split]) + "." + String(digits[split...])
        }
        if -6 < n && n <= 0 { return "0." + String(repeating: "0", count: -n) + digits }
        let exponent = n - 1
        let mantissa = k == 1 ? digits : String(digits.prefix(1)) + "." + String(digits.dropFirst())
        return mantissa + "e" + (exponent >= 0 ? "+" : "-") + String(abs(exponent))
    }

    /// Significant digits (no leading or trailing zeros) and the decimal point's position n, so
    /// that the value is 0.digits × 10^n, from a description like `1.25e-07` or `123.5`.
    private static func decompose(_ description: String) -> (String, Int) {
        var mantissa = Substring(description)
        var exponent = 0
        if let e = description.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = description[..<e]
            exponent = Int(description[description.index(after: e)...].replacingPlus()) ?? 0
        }
        var integerPart = mantissa
        var fraction = Substring("")
        if let dot = mantissa.firstIndex(of: ".") {
            integerPart = mantissa[..<dot]
            fraction = mantissa[mantissa.index(after: dot)...]
        }
        var digits = String(integerPart) + String(fraction)
        var point = integerPart.count + exponent
        while digits.first == "0" {
            digits.removeFirst()
            point -= 1
        }
        while digits.last == "0" { digits.removeLast() }
        return (digits, point)
    }
}

extension Substring {
    fileprivate func replacingPlus() -> Substring { first == "+" ? dropFirst() : self }
}
