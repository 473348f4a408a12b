import Foundation
@testable import HearthClient
import Testing

/// FirebaseDataEncoder, FirebaseDataDecoder and ServerTimestamp: the Foundation structures they make
/// and read, as the Database API hands them to and from the app.
@Suite struct CodableTests {
    // MARK: Fixtures

    enum Color: String, Codable { case red, green }
    enum Level: Int, Codable { case low = 1, high = 10 }

    struct Address: Codable, Equatable {
        var street: String
        var zip: String?
    }

    struct Person: Codable, Equatable {
        var name: String
        var age: Int
        var height: Double
        var admin: Bool
        var nickname: String?
        var tags: [String]
        var scores: [String: Int]
        var color: Color
        var level: Level
        var address: Address
        var previous: [Address]
        var matrix: [[Int]]
    }

    static let person = Person(
        name: "Ada", age: 36, height: 1.65, admin: true, nickname: nil, tags: ["math", "engines"],
        scores: ["a": 1, "b": 2], color: .green, level: .high, address: Address(street: "Main", zip: nil),
        previous: [Address(street: "Old", zip: "123")], matrix: [[1, 2], [], [3]])

    struct Stamped: Codable, Equatable {
        var text: String
        @ServerTimestamp var sentAt: Date?
    }

    struct Timestamped: Codable { @ServerTimestamp var ts: Date? }

    struct Box<Value: Codable & Equatable>: Codable, Equatable { var value: Value }

    struct Counter: Codable, Equatable { var n: Int }
    struct Flag: Codable, Equatable { var on: Bool }
    struct Ratio: Codable, Equatable { var x: Double }
    struct Small: Codable, Equatable { var byte: UInt8 }
    struct Holder: Codable, Equatable { var items: [Counter] }

    struct Nothing: Encodable {
        func encode(to encoder: any Encoder) throws {}
    }

    /// A key made from a string, for containers whose keys are data.
    struct DynamicKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init(stringValue: String) { self.init(stringValue) }
        init?(intValue: Int) { nil }
    }

    /// Encodes each key with itself as the value, so the output maps converted keys to the originals.
    struct KeyEcho: Encodable {
        var keys: [String]
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: DynamicKey.self)
            for key in keys { try container.encode(key, forKey: DynamicKey(key)) }
        }
    }

    /// The keys a keyed container reports, as the decoder converted them.
    struct KeyList: Decodable {
        var keys: [String]
        init(from decoder: any Decoder) throws {
            keys = try decoder.container(keyedBy: DynamicKey.self).allKeys.map(\.stringValue)
        }
    }

    // MARK: Helpers

    /// The case name and coding path of a decoding error, e.g. ("typeMismatch", ["items", "Index 1"]).
    static func describe(_ error: DecodingError?) -> (kind: String, path: [String]) {
        switch error {
        case .typeMismatch(_, let context)?: return ("typeMismatch", context.codingPath.map(\.stringValue))
        case .valueNotFound(_, let context)?: return ("valueNotFound", context.codingPath.map(\.stringValue))
        case .keyNotFound(let key, let context)?: return ("keyNotFound", (context.codingPath + [key]).map(\.stringValue))
        case .dataCorrupted(let context)?: return ("dataCorrupted", context.codingPath.map(\.stringValue))
        case nil: return ("none", [])
        @unknown default: return ("unknown", [])
        }
    }

    func roundTrip<T: Codable & Equatable>(
        _ value: T, encoder: FirebaseDataEncoder = FirebaseDataEncoder(), decoder: FirebaseDataDecoder = FirebaseDataDecoder()
    ) throws -> Any {
        let structure = try encoder.encode(value)
        #expect(try decoder.decode(T.self, from: structure) == value)
        return structure
    }

    static let date = Date(timeIntervalSince1970: 1_700_000_000.25)

    // MARK: Round trips and structure shapes

    @Test func nestedStructRoundTripsAsFoundationStructure() throws {
        let structure = try roundTrip(Self.person)
        let dictionary = try #require(structure as? [String: Any])
        #expect(dictionary["name"] as? String == "Ada")
        #expect(dictionary["age"] as? Int == 36)
        #expect(dictionary["height"] as? Double == 1.65)
        #expect(dictionary["admin"] as? Bool == true)
        #expect(dictionary["nickname"] == nil, "nil optionals are left out, as encodeIfPresent does")
        #expect(dictionary["tags"] as? [String] == ["math", "engines"])
        #expect(dictionary["scores"] as? [String: Int] == ["a": 1, "b": 2])
        #expect(dictionary["color"] as? String == "green")
        #expect(dictionary["level"] as? Int == 10)
        let address = try #require(dictionary["address"] as? [String: Any])
        #expect(address.count == 1 && address["street"] as? String == "Main")
        let previous = try #require(dictionary["previous"] as? [Any])
        #expect((previous.first as? [String: Any])?["zip"] as? String == "123")
        #expect(dictionary["matrix"] as? [[Int]] == [[1, 2], [], [3]])
    }

    @Test func leavesAreFoundationValues() throws {
        let encoder = FirebaseDataEncoder()
        let bool = try #require(try encoder.encode(true) as? NSNumber)
        #expect(String(cString: bool.objCType) == "c")
        #expect(bool === NSNumber(value: true), "the shared boolean NSNumber, recognisable as a boolean")
        #expect(try encoder.encode(42) as? Int == 42)
        #expect(try encoder.encode(Int8(-3)) as? NSNumber == NSNumber(value: -3))
        #expect(try encoder.encode(2.5) as? Double == 2.5)
        let float = try #require(try encoder.encode(Float(0.5)) as? NSNumber)
        #expect(String(cString: float.objCType) == "d", "Float is widened to Double")
        #expect(try encoder.encode("hi") as? String == "hi")
        let big = try #require(try encoder.encode(UInt64.max) as? NSNumber)
        #expect(big.uint64Value == UInt64.max)
        #expect(try encoder.encode(Int?.none) is NSNull)
        let withNil = try #require(try encoder.encode([1, nil, 3] as [Int?]) as? [Any])
        #expect(withNil.count == 3 && withNil[1] is NSNull)
        #expect(try encoder.encode([String: Int]()) as? [String: Any] != nil)
        #expect(try encoder.encode([Int]()) as? [Any] != nil)
    }

    @Test func enumsWithRawValuesRoundTrip() throws {
        #expect(try roundTrip(Box(value: Color.red)) as? [String: String] == ["value": "red"])
        #expect(try roundTrip(Box(value: Level.low)) as? [String: Int] == ["value": 1])
        let error = #expect(throws: DecodingError.self) {
            try FirebaseDataDecoder().decode(Color.self, from: "blue")
        }
        #expect(Self.describe(error).kind == "dataCorrupted")
    }

    @Test func integerWidthsRoundTripAtTheirLimits() throws {
        _ = try roundTrip(Box(value: Int8.min))
        _ = try roundTrip(Box(value: Int16.max))
        _ = try roundTrip(Box(value: Int32.min))
        _ = try roundTrip(Box(value: Int64.min))
        _ = try roundTrip(Box(value: UInt8.max))
        _ = try roundTrip(Box(value: UInt16.max))
        _ = try roundTrip(Box(value: UInt32.max))
        _ = try roundTrip(Box(value: UInt64.max))
        _ = try roundTrip(Box(value: UInt.max))
        _ = try roundTrip(Box(value: Float(0.1)))
        _ = try roundTrip(Box(value: Double.leastNonzeroMagnitude))
    }

    @Test func urlAndDecimal() throws {
        let url = try #require(URL(string: "https://example.com/a?b=c"))
        #expect(try roundTrip(Box(value: url)) as? [String: String] == ["value": "https://example.com/a?b=c"])
        let decimal = try #require(Decimal(string: "12345.6789"))
        let structure = try #require(try roundTrip(Box(value: decimal)) as? [String: Any])
        #expect(structure["value"] is NSDecimalNumber)
        #expect(try FirebaseDataDecoder().decode(Decimal.self, from: NSNumber(value: 0.1)) == Decimal(string: "0.1"))
        #expect(try FirebaseDataDecoder().decode(Decimal.self, from: NSNumber(value: 1e-7)) == Decimal(string: "0.0000001"))
        #expect(try FirebaseDataDecoder().decode(Decimal.self, from: NSNumber(value: 7)) == 7)
        #expect(try FirebaseDataDecoder().decode(Int.self, from: NSDecimalNumber(string: "42")) == 42)
        #expect(throws: DecodingError.self) { try FirebaseDataDecoder().decode(Int.self, from: NSDecimalNumber(string: "4.2")) }
        #expect(throws: DecodingError.self) { try FirebaseDataDecoder().decode(URL.self, from: "") }
    }

    // MARK: Dates

    @Test func datesDeferredToDateAreSecondsSinceReferenceDate() throws {
        let structure = try #require(try roundTrip(Box(value: Self.date)) as? [String: Any])
        #expect(structure["value"] as? Double == Self.date.timeIntervalSinceReferenceDate)
    }

    @Test func datesSinceNineteenSeventy() throws {
        let encoder = FirebaseDataEncoder(), decoder = FirebaseDataDecoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        decoder.dateDecodingStrategy = .secondsSince1970
        var structure = try #require(try roundTrip(Box(value: Self.date), encoder: encoder, decoder: decoder) as? [String: Any])
        #expect(structure["value"] as? Double == 1_700_000_000.25)

        encoder.dateEncodingStrategy = .millisecondsSince1970
        decoder.dateDecodingStrategy = .millisecondsSince1970
        structure = try #require(try roundTrip(Box(value: Self.date), encoder: encoder, decoder: decoder) as? [String: Any])
        #expect(structure["value"] as? Double == 1_700_000_000_250)
        // Integer milliseconds, as the database returns whole numbers, decode too.
        let decoded = try decoder.decode(Date.self, from: NSNumber(value: Int64(1_700_000_000_000)))
        #expect(decoded == Date(timeIntervalSince1970: 1_700_000_000))
    }

    @Test func datesAsISO8601Strings() throws {
        let encoder = FirebaseDataEncoder(), decoder = FirebaseDataDecoder()
        encoder.dateEncodingStrategy = .iso8601
        decoder.dateDecodingStrategy = .iso8601
        let whole = Date(timeIntervalSince1970: 1_700_000_000)
        let structure = try roundTrip([whole, whole.addingTimeInterval(60)], encoder: encoder, decoder: decoder)
        #expect(structure as? [String] == ["2023-11-14T22:13:20Z", "2023-11-14T22:14:20Z"])
        let error = #expect(throws: DecodingError.self) { try decoder.decode(Date.self, from: "yesterday") }
        #expect(Self.describe(error).kind == "dataCorrupted")
    }

    @Test func datesWithAFormatter() throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        let encoder = FirebaseDataEncoder(), decoder = FirebaseDataDecoder()
        encoder.dateEncodingStrategy = .formatted(formatter)
        decoder.dateDecodingStrategy = .formatted(formatter)
        let date = Date(timeIntervalSince1970: 1_700_000_040)
        #expect(try roundTrip(Box(value: date), encoder: encoder, decoder: decoder) as? [String: String] == ["value": "2023-11-14 22:14"])
    }

    @Test func datesWithCustomClosures() throws {
        let encoder = FirebaseDataEncoder(), decoder = FirebaseDataDecoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode("day \(Int(date.timeIntervalSince1970 / 86_400))")
        }
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let day = Double(text.dropFirst(4)) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a day"))
            }
            return Date(timeIntervalSince1970: day * 86_400)
        }
        let day = Date(timeIntervalSince1970: 19_000 * 86_400)
        #expect(try roundTrip(Box(value: day), encoder: encoder, decoder: decoder) as? [String: String] == ["value": "day 19000"])

        encoder.dateEncodingStrategy = .custom { _, _ in }
        let empty = try #require(try encoder.encode(Box(value: day)) as? [String: Any])
        #expect((empty["value"] as? [String: Any])?.isEmpty == true, "a closure that encodes nothing leaves an empty dictionary")
    }

    // MARK: Data

    @Test func dataStrategies() throws {
        let bytes = Data([0, 1, 254, 255])
        let encoder = FirebaseDataEncoder(), decoder = FirebaseDataDecoder()
        #expect(try roundTrip(Box(value: bytes)) as? [String: String] == ["value": "AAH+/w=="])

        encoder.dataEncodingStrategy = .blob
        decoder.dataDecodingStrategy = .blob
        let blob = try #require(try roundTrip(Box(value: bytes), encoder: encoder, decoder: decoder) as? [String: Any])
        #expect(blob["value"] as? Data == bytes)

        encoder.dataEncodingStrategy = .deferredToData
        decoder.dataDecodingStrategy = .deferredToData
        let array = try #require(try roundTrip(Box(value: bytes), encoder: encoder, decoder: decoder) as? [String: Any])
        #expect(array["value"] as? [Int] == [0, 1, 254, 255])

        encoder.dataEncodingStrategy = .custom { data, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(data.count)
        }
        decoder.dataDecodingStrategy = .custom { decoder in
            Data(count: try decoder.singleValueContainer().decode(Int.self))
        }
        #expect(try encoder.encode(Box(value: bytes)) as? [String: Int] == ["value": 4])
        #expect(try decoder.decode(Box<Data>.self, from: ["value": 2]) == Box(value: Data([0, 0])))

        let error = #expect(throws: DecodingError.self) { try FirebaseDataDecoder().decode(Data.self, from: "not base64!") }
        #expect(Self.describe(error).kind == "dataCorrupted")
    }

    // MARK: Keys

    struct SnakeModel: Codable, Equatable {
        var userName: String
        var myURLValue: Int
        var isAdmin: Bool
    }

    @Test func snakeCaseBothWays() throws {
        let encoder = FirebaseDataEncoder(), decoder = FirebaseDataDecoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let model = SnakeModel(userName: "ada", myURLValue: 3, isAdmin: false)
        let structure = try #require(try encoder.encode(model) as? [String: Any])
        #expect(Set(structure.keys) == ["user_name", "my_url_value", "is_admin"])

        // As with JSONDecoder, "my_url_value" reads back as "myUrlValue", which a "myURLValue" key does not match.
        let error = #expect(throws: DecodingError.self) { try decoder.decode(SnakeModel.self, from: structure) }
        #expect(Self.describe(error).kind == "keyNotFound")

        struct Readable: Codable, Equatable { var userName: String; var myUrlValue: Int; var isAdmin: Bool }
        let readable = Readable(userName: "ada", myUrlValue: 3, isAdmin: false)
        #expect(try decoder.decode(Readable.self, from: structure) == readable)
        _ = try roundTrip(readable, encoder: encoder, decoder: decoder)
    }

    static let camelKeys = [
        "", "a", "A", "aA", "simpleOneTwo", "myURL", "myURLValue", "URLValue", "ABCDef", "ALLCAPS", "singleCharacterAtEndX",
        "thisIsAnXMLProperty", "getHTTPResponseCode", "single", "version4Thing", "x1Y2", "partCAPS", "partCAPSLowerAGAIN",
        "manyWordsInThisThing", "asdfĆqer", "ÉcoleNormale", "already_snake_case", "dataPoint22", "dataPoint22Word",
        "_oneTwoThree", "oneTwoThree_", "__oneTwoThree", "oneTwoThree__", "_oneTwoThree_", "_test", "__test", "test__", "🐧🐟",
        "m͉̟̹y̦̳G͍͚͎̳r̤͉̤͕ͅea̲͕t͇̥̼͖U͇̝̠R͙̻̥͓̣L̥̖͎͓̪̫ͅR̩͖̩eq͈͓u̞e̱s̙t̤̺ͅ", "ǅungla", "snake_AndCamel", "aBCd", "myIDs", "userIDNumber", "iPhone", "AB",
    ]

    @Test func snakeCaseMatchesKnownConversions() throws {
        let encoder = FirebaseDataEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let expected = [
            "myURLValue": "my_url_value", "simpleOneTwo": "simple_one_two", "thisIsAnXMLProperty": "this_is_an_xml_property",
            "version4Thing": "version4_thing", "partCAPSLowerAGAIN": "part_caps_lower_again", "_oneTwoThree_": "_one_two_three_",
            "URLValue": "u_rl_value", "dataPoint22Word": "data_point22_word", "already_snake_case": "already_snake_case",
        ]
        let structure = try #require(try encoder.encode(KeyEcho(keys: Array(expected.keys))) as? [String: String])
        #expect(Dictionary(uniqueKeysWithValues: structure.map { ($0.value, $0.key) }) == expected)
    }

    @Test(arguments: camelKeys)
    func snakeCaseEncodingAgreesWithJSONEncoder(key: String) throws {
        let json = JSONEncoder()
        json.keyEncodingStrategy = .convertToSnakeCase
        let reference = try JSONSerialization.jsonObject(with: try json.encode(KeyEcho(keys: [key]))) as? [String: String]
        let encoder = FirebaseDataEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        #expect(try encoder.encode(KeyEcho(keys: [key])) as? [String: String] == reference)
    }

    @Test(arguments: [
        "", "_", "___", "a", "single", "my_url_value", "_leading", "trailing_", "__both__", "a__b", "ALREADY_UPPER",
        "snake_Case_Mixed", "with_2_digits", "url2x_foo", "é_école", "a_b_c", "camelCase", "_one_two_",
    ])
    func snakeCaseDecodingAgreesWithJSONDecoder(key: String) throws {
        let json = JSONDecoder()
        json.keyDecodingStrategy = .convertFromSnakeCase
        let data = try JSONSerialization.data(withJSONObject: [key: 1])
        let reference = try json.decode(KeyList.self, from: data).keys
        let decoder = FirebaseDataDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try decoder.decode(KeyList.self, from: [key: 1]).keys == reference)
    }

    @Test func customKeyStrategiesSeeTheWholeCodingPath() throws {
        struct Inner: Codable, Equatable { var leaf: Int }
        struct Outer: Codable, Equatable { var inner: Inner }
        var seen: [[String]] = []
        let encoder = FirebaseDataEncoder()
        encoder.keyEncodingStrategy = .custom { path in
            seen.append(path.map(\.stringValue))
            return DynamicKey(path.last?.stringValue.uppercased() ?? "")
        }
        let structure = try encoder.encode(Outer(inner: Inner(leaf: 1)))
        #expect((structure as? [String: [String: Int]]) == ["INNER": ["LEAF": 1]])
        #expect(seen == [["inner"], ["inner", "leaf"]] || seen == [["inner", "leaf"], ["inner"]])

        let decoder = FirebaseDataDecoder()
        decoder.keyDecodingStrategy = .custom { path in DynamicKey(path.last?.stringValue.lowercased() ?? "") }
        #expect(try decoder.decode(Outer.self, from: structure) == Outer(inner: Inner(leaf: 1)))
    }

    // MARK: ServerTimestamp

    @Test func serverTimestampEncodesThePlaceholderOrMilliseconds() throws {
        let encoder = FirebaseDataEncoder()
        let pending = try #require(try encoder.encode(Stamped(text: "hi")) as? [String: Any])
        #expect(pending["sentAt"] as? [String: String] == [".sv": "timestamp"])
        #expect(pending["text"] as? String == "hi")

        let sent = try #require(try encoder.encode(Stamped(text: "hi", sentAt: Self.date)) as? [String: Any])
        #expect(sent["sentAt"] as? Int == 1_700_000_000_250)
        let negative = try #require(try encoder.encode(Timestamped(ts: Date(timeIntervalSince1970: -1.0005))) as? [String: Int])
        #expect(negative == ["ts": -1000], "truncated toward zero, as Int(_:) does")
    }

    @Test func serverTimestampDecodesMillisecondsNullAndAbsence() throws {
        let decoder = FirebaseDataDecoder()
        let read = try decoder.decode(Stamped.self, from: ["text": "hi", "sentAt": NSNumber(value: Int64(1_700_000_000_250))])
        #expect(read.sentAt == Self.date)
        #expect(try decoder.decode(Stamped.self, from: ["text": "hi"]).sentAt == nil)
        #expect(try decoder.decode(Stamped.self, from: ["text": "hi", "sentAt": NSNull()]).sentAt == nil)
        #expect(try decoder.decode(Timestamped.self, from: [String: Any]()).ts == nil)
        #expect(try decoder.decode(ServerTimestamp.self, from: NSNull()) == ServerTimestamp(wrappedValue: nil))
        let error = #expect(throws: DecodingError.self) { try decoder.decode(Stamped.self, from: ["text": "hi", "sentAt": "noon"]) }
        #expect(Self.describe(error).path == ["sentAt"])
    }

    @Test func serverTimestampPropertiesInitializeAsNil() throws {
        #expect(Timestamped().ts == nil)
        #expect(Timestamped(ts: nil).ts == nil)
        var stamped = Stamped(text: "x")
        stamped.sentAt = Self.date
        #expect(stamped.sentAt == Self.date)
        _ = try roundTrip(Stamped(text: "x", sentAt: Date(timeIntervalSince1970: 1_700_000_000.5)))
    }

    @Test func serverTimestampRejectsDatesBeyondIntMilliseconds() {
        #expect(throws: EncodingError.self) {
            try FirebaseDataEncoder().encode(Timestamped(ts: Date(timeIntervalSince1970: 1e300)))
        }
    }

    // MARK: Errors

    @Test func fractionalNumberIsNotAnInt() {
        let error = #expect(throws: DecodingError.self) { try FirebaseDataDecoder().decode(Counter.self, from: ["n": 2.5]) }
        #expect(Self.describe(error) == ("dataCorrupted", ["n"]))
    }

    @Test func outOfRangeNumbersThrow() {
        let decoder = FirebaseDataDecoder()
        var error = #expect(throws: DecodingError.self) { try decoder.decode(Small.self, from: ["byte": 300]) }
        #expect(Self.describe(error) == ("dataCorrupted", ["byte"]))
        error = #expect(throws: DecodingError.self) { try decoder.decode(UInt.self, from: NSNumber(value: -1)) }
        #expect(Self.describe(error).kind == "dataCorrupted")
        error = #expect(throws: DecodingError.self) { try decoder.decode(Int64.self, from: NSNumber(value: UInt64.max)) }
        #expect(Self.describe(error).kind == "dataCorrupted")
        error = #expect(throws: DecodingError.self) { try decoder.decode(Int.self, from: NSNumber(value: 1e19)) }
        #expect(Self.describe(error).kind == "dataCorrupted")
        error = #expect(throws: DecodingError.self) { try decoder.decode(Int.self, from: NSNumber(value: Double.nan)) }
        #expect(Self.describe(error).kind == "dataCorrupted")
        error = #expect(throws: DecodingError.self) { try decoder.decode(Float.self, from: NSNumber(value: 1e300)) }
        #expect(Self.describe(error).kind == "dataCorrupted")
        #expect((try? decoder.decode(Int8.self, from: NSNumber(value: -128))) == -128)
        #expect((try? decoder.decode(Int.self, from: NSNumber(value: 3.0))) == 3)
    }

    @Test func missingKeyThrowsKeyNotFound() {
        let error = #expect(throws: DecodingError.self) { try FirebaseDataDecoder().decode(Counter.self, from: ["m": 1]) }
        #expect(Self.describe(error) == ("keyNotFound", ["n"]))
    }

    @Test func nullForANonOptionalThrowsValueNotFound() {
        let error = #expect(throws: DecodingError.self) { try FirebaseDataDecoder().decode(Counter.self, from: ["n": NSNull()]) }
        #expect(Self.describe(error) == ("valueNotFound", ["n"]))
    }

    @Test func topLevelNullIsNotAnInt() throws {
        let decoder = FirebaseDataDecoder()
        let error = #expect(throws: DecodingError.self) { try decoder.decode(Int.self, from: NSNull()) }
        #expect(Self.describe(error).kind == "valueNotFound")
        #expect(throws: DecodingError.self) { try decoder.decode(Counter.self, from: NSNull()) }
        #expect(try decoder.decode(Int?.self, from: NSNull()) == nil)
        #expect(try decoder.decode(Int?.self, from: Int?.none as Any) == nil)
        #expect(try decoder.decode(Int?.self, from: NSNumber(value: 4)) == 4)
    }

    @Test func nonConformingFloats() throws {
        let encoder = FirebaseDataEncoder()
        var error: EncodingError? = #expect(throws: EncodingError.self) { try encoder.encode(Ratio(x: .nan)) }
        if case .invalidValue(_, let context)? = error {
            #expect(context.codingPath.map(\.stringValue) == ["x"])
        } else {
            Issue.record("expected invalidValue, got \(String(describing: error))")
        }
        error = #expect(throws: EncodingError.self) { try encoder.encode([Float.infinity]) }
        #expect(error != nil)

        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        let decoder = FirebaseDataDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        #expect(try encoder.encode([Double.infinity, -Double.infinity, 1]) as? [AnyHashable] == ["+inf", "-inf", 1])
        #expect(try decoder.decode([Double].self, from: ["+inf", "-inf"]) == [.infinity, -.infinity])
        #expect(try decoder.decode(Double.self, from: "nan").isNaN)
        #expect(try decoder.decode(Float.self, from: "-inf") == -.infinity)
        #expect(throws: DecodingError.self) { try FirebaseDataDecoder().decode(Double.self, from: "nan") }
    }

    @Test func topLevelValueThatEncodesNothingThrows() {
        let error = #expect(throws: EncodingError.self) { try FirebaseDataEncoder().encode(Nothing()) }
        guard case .invalidValue(_, let context)? = error else {
            Issue.record("expected invalidValue")
            return
        }
        #expect(context.debugDescription == "Top-level Nothing did not encode any values.")
        // Nested, it is an empty dictionary, as with JSONEncoder.
        #expect((try? FirebaseDataEncoder().encode([Nothing()])) as? [[String: Int]] == [[:]])
    }

    @Test func typeMismatchesNameThePath() {
        let decoder = FirebaseDataDecoder()
        var error = #expect(throws: DecodingError.self) { try decoder.decode(Holder.self, from: ["items": [["n": 1], ["n": "two"]]]) }
        #expect(Self.describe(error) == ("typeMismatch", ["items", "Index 1", "n"]))
        error = #expect(throws: DecodingError.self) { try decoder.decode(Holder.self, from: ["items": "none"]) }
        #expect(Self.describe(error) == ("typeMismatch", ["items"]))
        error = #expect(throws: DecodingError.self) { try decoder.decode(Counter.self, from: [1, 2, 3]) }
        #expect(Self.describe(error) == ("keyNotFound", ["n"]))
        error = #expect(throws: DecodingError.self) { try decoder.decode(String.self, from: NSNumber(value: 1)) }
        #expect(Self.describe(error).kind == "typeMismatch")
        error = #expect(throws: DecodingError.self) { try decoder.decode([Int].self, from: ["n": 1]) }
        #expect(Self.describe(error) == ("typeMismatch", []), "only index keys make an array")
    }

    // MARK: Booleans and numbers

    @Test func booleanNumbersAreBooleans() throws {
        let decoder = FirebaseDataDecoder()
        #expect(try decoder.decode(Flag.self, from: ["on": NSNumber(value: true)]) == Flag(on: true))
        #expect(try decoder.decode(Bool.self, from: NSNumber(value: false)) == false)
        #expect(try decoder.decode(Bool.self, from: true) == true)
        let error = #expect(throws: DecodingError.self) { try decoder.decode(Flag.self, from: ["on": NSNumber(value: 1)]) }
        #expect(Self.describe(error) == ("typeMismatch", ["on"]))
        #expect(throws: DecodingError.self) { try decoder.decode(Bool.self, from: 1) }
        #expect(throws: DecodingError.self) { try decoder.decode(Counter.self, from: ["n": NSNumber(value: true)]) }
        #expect(throws: DecodingError.self) { try decoder.decode(Double.self, from: NSNumber(value: false)) }
    }

    @Test func numbersDecodeFromAnyNumericForm() throws {
        let decoder = FirebaseDataDecoder()
        #expect(try decoder.decode(Counter.self, from: ["n": NSNumber(value: 3)]) == Counter(n: 3))
        #expect(try decoder.decode(Counter.self, from: ["n": 3]) == Counter(n: 3))
        #expect(try decoder.decode(Counter.self, from: ["n": Int8(3)]) == Counter(n: 3))
        #expect(try decoder.decode(Counter.self, from: ["n": UInt64(3)]) == Counter(n: 3))
        #expect(try decoder.decode(Counter.self, from: ["n": 3.0]) == Counter(n: 3))
        #expect(try decoder.decode(Ratio.self, from: ["x": NSNumber(value: 3)]) == Ratio(x: 3))
        #expect(try decoder.decode(Ratio.self, from: ["x": Float(0.5)]) == Ratio(x: 0.5))
        #expect(try decoder.decode(UInt64.self, from: NSNumber(value: UInt64.max)) == UInt64.max)
    }

    // MARK: The database's arrays and dictionaries

    @Test func arrayDecodesFromIndexKeyedDictionary() throws {
        let decoder = FirebaseDataDecoder()
        #expect(try decoder.decode([String].self, from: ["0": "x", "1": "y"]) == ["x", "y"])
        #expect(try decoder.decode([String].self, from: ["10": "c", "2": "b", "0": "a"]) == ["a", "b", "c"], "numeric, not string, order")
        #expect(try decoder.decode([Int].self, from: [String: Any]()) == [])
        #expect(try decoder.decode(Holder.self, from: ["items": ["1": ["n": 2], "0": ["n": 1]]]) == Holder(items: [Counter(n: 1), Counter(n: 2)]))
        var error = #expect(throws: DecodingError.self) { try decoder.decode([String].self, from: ["0": "x", "one": "y"]) }
        #expect(Self.describe(error).kind == "typeMismatch")
        error = #expect(throws: DecodingError.self) { try decoder.decode([String].self, from: ["01": "x"]) }
        #expect(Self.describe(error).kind == "typeMismatch", "only canonical indices")
    }

    @Test func dictionaryDecodesFromArray() throws {
        let decoder = FirebaseDataDecoder()
        // The database returns {"1": "a", "2": "b"} as [null, "a", "b"].
        let fromServer: [Any] = [NSNull(), "a", "b"]
        #expect(try decoder.decode([Int: String].self, from: fromServer) == [1: "a", 2: "b"])
        #expect(try decoder.decode([String: String].self, from: fromServer) == ["1": "a", "2": "b"])
        _ = try roundTrip([3: "c", 4: "d"])
    }

    @Test func foundationContainersAndStringsAreAccepted() throws {
        let decoder = FirebaseDataDecoder()
        let nsDictionary = NSDictionary(dictionary: ["n": NSNumber(value: 5)])
        #expect(try decoder.decode(Counter.self, from: nsDictionary) == Counter(n: 5))
        let anyHashable: [AnyHashable: Any] = ["n": 6]
        #expect(try decoder.decode(Counter.self, from: anyHashable) == Counter(n: 6))
        let nsArray = NSArray(array: [NSString(string: "p"), NSString(string: "q")])
        #expect(try decoder.decode([String].self, from: nsArray) == ["p", "q"])
        let optionals: [String: Any?] = ["street": "Elm", "zip": nil]
        #expect(try decoder.decode(Address.self, from: optionals) == Address(street: "Elm", zip: nil))
        #expect(throws: DecodingError.self) { try decoder.decode(Counter.self, from: [1: "n"] as [AnyHashable: Any]) }
    }

    // MARK: Containers

    final class Base: Codable {
        var name: String
        init(name: String) { self.name = name }
    }

    final class Derived: Codable {
        var base: Base
        var extra: Int
        init(base: Base, extra: Int) {
            self.base = base
            self.extra = extra
        }
        enum CodingKeys: String, CodingKey { case extra, other }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(extra, forKey: .extra)
            try base.encode(to: container.superEncoder())
            try base.encode(to: container.superEncoder(forKey: .other))
        }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            extra = try container.decode(Int.self, forKey: .extra)
            base = try Base(from: container.superDecoder())
            let other = try Base(from: container.superDecoder(forKey: .other))
            guard other.name == base.name else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "supers differ"))
            }
        }
    }

    @Test func superEncodersAndDecoders() throws {
        let structure = try FirebaseDataEncoder().encode(Derived(base: Base(name: "b"), extra: 2))
        let dictionary = try #require(structure as? [String: Any])
        #expect(dictionary["extra"] as? Int == 2)
        #expect(dictionary["super"] as? [String: String] == ["name": "b"])
        #expect(dictionary["other"] as? [String: String] == ["name": "b"])
        let decoded = try FirebaseDataDecoder().decode(Derived.self, from: structure)
        #expect(decoded.base.name == "b" && decoded.extra == 2)
    }

    /// Writes its fields through two keyed containers, nested containers asked for twice, and an
    /// unkeyed container with nested and super-encoded elements, reading them back the same way.
    struct Layered: Codable, Equatable {
        var a: Int
        var b: String
        var x: Int
        var y: Int
        var list: [Int]

        enum First: String, CodingKey { case a, nested, list }
        enum Second: String, CodingKey { case b }
        enum Inner: String, CodingKey { case x, y }

        init(a: Int, b: String, x: Int, y: Int, list: [Int]) {
            (self.a, self.b, self.x, self.y, self.list) = (a, b, x, y, list)
        }

        func encode(to encoder: any Encoder) throws {
            var first = encoder.container(keyedBy: First.self)
            try first.encode(a, forKey: .a)
            var second = encoder.container(keyedBy: Second.self)
            try second.encode(b, forKey: .b)
            var inner = first.nestedContainer(keyedBy: Inner.self, forKey: .nested)
            try inner.encode(x, forKey: .x)
            var again = first.nestedContainer(keyedBy: Inner.self, forKey: .nested)
            try again.encode(y, forKey: .y)
            var list = first.nestedUnkeyedContainer(forKey: .list)
            try list.encode(self.list[0])
            var pair = list.nestedUnkeyedContainer()
            try pair.encode(self.list[1])
            var wrapped = list.nestedContainer(keyedBy: Inner.self)
            try wrapped.encode(self.list[2], forKey: .x)
            var single = list.superEncoder().singleValueContainer()
            try single.encode(self.list[3])
        }

        init(from decoder: any Decoder) throws {
            let first = try decoder.container(keyedBy: First.self)
            a = try first.decode(Int.self, forKey: .a)
            b = try decoder.container(keyedBy: Second.self).decode(String.self, forKey: .b)
            let inner = try first.nestedContainer(keyedBy: Inner.self, forKey: .nested)
            x = try inner.decode(Int.self, forKey: .x)
            y = try inner.decode(Int.self, forKey: .y)
            var list = try first.nestedUnkeyedContainer(forKey: .list)
            #expect(list.count == 4)
            let element0 = try list.decode(Int.self)
            var pair = try list.nestedUnkeyedContainer()
            let element1 = try pair.decode(Int.self)
            let element2 = try list.nestedContainer(keyedBy: Inner.self).decode(Int.self, forKey: .x)
            let element3 = try list.superDecoder().singleValueContainer().decode(Int.self)
            #expect(list.isAtEnd)
            self.list = [element0, element1, element2, element3]
        }
    }

    @Test func nestedContainersAndRepeatedContainers() throws {
        let value = Layered(a: 1, b: "two", x: 3, y: 4, list: [5, 6, 7, 8])
        let structure = try #require(try roundTrip(value) as? [String: Any])
        #expect(structure["nested"] as? [String: Int] == ["x": 3, "y": 4])
        #expect(structure["b"] as? String == "two")
        let list = try #require(structure["list"] as? [Any])
        #expect(list.count == 4 && list[0] as? Int == 5 && list[1] as? [Int] == [6] && list[3] as? Int == 8)
        #expect(list[2] as? [String: Int] == ["x": 7])
    }

    /// Uses `decodeNil(forKey:)` and the unkeyed container directly, as hand-written decoders do.
    struct Manual: Decodable {
        var missingIsNil: Bool
        var nullIsNil: Bool
        var elements: [Int?]
        enum Keys: String, CodingKey { case missing, null, list }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            missingIsNil = try container.decodeNil(forKey: .missing)
            nullIsNil = try container.decodeNil(forKey: .null)
            var list = try container.nestedUnkeyedContainer(forKey: .list)
            elements = []
            while !list.isAtEnd {
                elements.append(try list.decodeNil() ? nil : try list.decode(Int.self))
            }
            #expect(throws: DecodingError.self) { try list.decode(Int.self) }
            #expect(throws: DecodingError.self) { try list.decodeNil() }
        }
    }

    @Test func decodeNilForNullMissingAndElements() throws {
        let manual = try FirebaseDataDecoder().decode(Manual.self, from: ["null": NSNull(), "list": [1, NSNull(), 3]])
        #expect(manual.missingIsNil && manual.nullIsNil)
        #expect(manual.elements == [1, nil, 3])
    }

    @Test func userInfoReachesTheCodables() throws {
        struct Probe: Codable {
            init() {}
            init(from decoder: any Decoder) throws {
                guard decoder.userInfo[CodableTests.probeKey] as? String == "decoding" else {
                    throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no userInfo"))
                }
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(encoder.userInfo[CodableTests.probeKey] as? String ?? "none")
            }
        }
        let encoder = FirebaseDataEncoder(), decoder = FirebaseDataDecoder()
        encoder.userInfo[Self.probeKey] = "encoding"
        decoder.userInfo[Self.probeKey] = "decoding"
        #expect(try encoder.encode(Probe()) as? String == "encoding")
        _ = try decoder.decode(Probe.self, from: "anything")
    }

    static let probeKey = CodingUserInfoKey(rawValue: "probe")!

    @Test func aConfiguredCoderPairMayBeSharedAcrossTasks() async throws {
        let encoder = FirebaseDataEncoder(), decoder = FirebaseDataDecoder()
        encoder.dateEncodingStrategy = .iso8601
        decoder.dateDecodingStrategy = .iso8601
        let person = Self.person
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<50 {
                        let structure = try encoder.encode(Box(value: person))
                        guard try decoder.decode(Box<Person>.self, from: structure) == Box(value: person) else { return false }
                        _ = try decoder.decode(Date.self, from: try encoder.encode(Date(timeIntervalSince1970: 0)))
                    }
                    return true
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 8))
    }
}
