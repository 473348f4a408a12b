/// The common short decimals (`4.7`, `-0.25`, `1.5e3`) converted without going through `String`
/// and the C library's `strtod`, which cost ≈ 1,500 instructions per number under callgrind.
///
/// When the digits, read as an integer, are at most 2^53 and the decimal exponent is within
/// ±22, both the digits and the power of ten are exact binary64 values, so one IEEE multiplication
/// or division rounds the true value correctly: the result is the one `Double(String)` gives.
/// Everything else (long mantissas, large exponents) returns nil and takes the slow path.
enum JSONDecimal {
    /// Exact binary64 powers of ten, 10^0 through 10^22.
    static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    /// The magnitude of the number whose digits start at `integerStart` (after any `-`) and end
    /// before `end`; the grammar has been checked. nil when the fast path cannot promise correct
    /// rounding.
    @inline(__always)
    static func exactlyRounded(_ bytes: UnsafeBufferPointer<UInt8>, integerStart: Int, end: Int) -> Double? {
        var mantissa: UInt64 = 0
        var digits = 0
        var fractionDigits = 0
        var inFraction = false
        var i = integerStart
        while i < end {
            let byte = bytes[i]
            if byte == UInt8(ascii: ".") {
                inFraction = true
            } else if (byte &- UInt8(ascii: "0")) < 10 {
                // 19 digits always fit in UInt64; the 2^53 check below decides exactness.
                if digits == 19 { return nil }
                mantissa = mantissa &* 10 &+ UInt64(byte &- UInt8(ascii: "0"))
                digits += 1
                if inFraction { fractionDigits += 1 }
            } else {
                break  // 'e' or 'E'
            }
            i += 1
        }
        var exponent = 0
        if i < end {
            i += 1  // e
            var negativeExponent = false
            if bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") {
                negativeExponent = bytes[i] == UInt8(ascii: "-")
                i += 1
            }
            while i < end {
                if exponent > 1000 { return nil }
                exponent = exponent * 10 + Int(bytes[i] &- UInt8(ascii: "0"))
                i += 1
            }
            if negativeExponent { exponent = -exponent }
        }
        guard mantissa <= 1 << 53 else { return nil }
        let scale = exponent - fractionDigits
        let value = Double(mantissa)
        if scale >= 0 {
            return scale <= 22 ? value * powersOfTen[scale] : nil
        }
        return scale >= -22 ? value / powersOfTen[-scale] : nil
    }
}
