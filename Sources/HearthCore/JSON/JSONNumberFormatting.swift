/// Numbers as JavaScript's `Number.prototype.toString` writes them, which is what Firebase's
/// clients and REST responses show.
enum JSONNumberFormatting {
    static func appendInteger(_ value: Int64, to output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            var n = 0
            repeat {
                buffer[23 - n] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                n += 1
            } while magnitude > 0
            output.append(contentsOf: buffer[(24 - n)...])
        }
    }

    /// Lays out the shortest round-trip digits (from `Double.description`, which Swift computes
    /// with an exact shortest-digits algorithm) by ECMA-262 Number::toString: plain notation for
    /// 1e-7 < |x| < 1e21, otherwise `d.ddde±n`.
    static func appendDouble(_ value: Double, to output: inout [UInt8]) {
        precondition(value.isFinite, "JSON has no NaN or infinity")
        if value == 0 {
            output.append(UInt8(ascii: "0"))  // JavaScript writes -0 as "0" too.
            return
        }
        if value < 0 { output.append(UInt8(ascii: "-")) }
        // Split "d.ddd" or "d.ddde±x" into significant digits and a decimal exponent n, with
        // value = 0.d1d2…dk × 10^n (the notation ECMA-262 uses).
        var digits: [UInt8] = []
        var pointPosition: Int?
        var exponent = 0
        var text = value.magnitude.description
        text.withUTF8 { utf8 in
            var i = 0
            while i < utf8.count {
                let byte = utf8[i]
                if byte == UInt8(ascii: ".") {
                    pointPosition = digits.count
                } else if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                    exponent = Int(String(decoding: UnsafeBufferPointer(rebasing: utf8[(i + 1)...]), as: UTF8.self))!
                    break
                } else {
                    digits.append(byte)
                }
                i += 1
            }
        }
        var n = (pointPosition ?? digits.count) + exponent
        while digits.first == UInt8(ascii: "0") {
            digits.removeFirst()
            n -= 1
        }
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        let k = digits.count
        if k <= n && n <= 21 {
            output.append(contentsOf: digits)
            output.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: n - k))
        } else if 0 < n && n <= 21 {
            output.append(contentsOf: digits[..<n])
            output.append(UInt8(ascii: "."))
            output.append(contentsOf: digits[n...])
        } else if -6 < n && n <= 0 {
            output.append(contentsOf: [UInt8(ascii: "0"), UInt8(ascii: ".")])
            output.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: -n))
            output.append(contentsOf: digits)
        } else {
            output.append(digits[0])
            if k > 1 {
                output.append(UInt8(ascii: "."))
                output.append(contentsOf: digits[1...])
            }
            output.append(UInt8(ascii: "e"))
            output.append(n - 1 >= 0 ? UInt8(ascii: "+") : UInt8(ascii: "-"))
            appendInteger(Int64(abs(n - 1)), to: &output)
        }
    }
}
