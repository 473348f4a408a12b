import Testing
@testable import HearthCore

/// Integer literals are read eight digits at a time, then digit by digit: every length from 1 to
/// 21 digits, with both signs, must give the exact `Int64` or, past its range, the rounded double.
@Suite struct JSONIntegerDigitsTests {
    @Test func integersOfEveryLength() throws {
        var random = SeededGenerator(seed: 11)
        for length in 1...21 {
            for round in 0..<40 {
                var digits = (0..<length).map { _ in Character(String(Int.random(in: 0...9, using: &random))) }
                if digits[0] == "0" && length > 1 { digits[0] = "1" }
                if round == 0 { digits = Array(repeating: "9", count: length) }
                if round == 1 && length > 1 { digits = ["1"] + Array(repeating: "0", count: length - 1) }
                for sign in ["", "-"] {
                    let literal = sign + String(digits)
                    let node = try Node(json: literal)
                    if let exact = Int64(literal) {
                        #expect(node.leafValue == .integer(exact), "\(literal)")
                    } else {
                        #expect(node.numberValue == Double(literal)!, "\(literal)")
                    }
                }
            }
        }
        #expect(try Node(json: "[12345678, 123456789012345678]").child("1").leafValue == .integer(123_456_789_012_345_678))
        #expect(try Node(json: "-9223372036854775808") == Node(Int64.min))
        #expect(try Node(json: "9223372036854775807") == Node(Int64.max))
        #expect(try Node(json: "-9223372036854775809").numberValue == -9_223_372_036_854_775_809.0)
    }

    @Test func eightDigitsValue() {
        for text in ["00000000", "12345678", "99999999", "10000000", "00000001", "90817263"] {
            let word = text.utf8.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            #expect(JSONParser.eightDigitsValue(word) == UInt64(text)!, "\(text)")
        }
    }
}
