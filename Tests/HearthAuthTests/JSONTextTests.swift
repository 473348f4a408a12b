import Foundation
import Testing

@testable import HearthAuth

@Test func jsonTextWritesWhatFoundationReadsBack() throws {
    let parsedClaims = try JSONSerialization.jsonObject(with: Data(#"{"admin":true,"level":3,"ratio":0.5,"tags":["a"],"none":null}"#.utf8))
    let value: [String: Any] = [
        "text": "quote \" backslash \\ newline \n tab \t bell \u{7} é ✓", "yes": true, "no": false, "int": 42,
        "int64": Int64(1_800_000_000), "double": 1.25, "whole": 3.0, "array": [1, "two", false], "claims": parsedClaims,
    ]
    let text = JSONText.encode(value, sorted: true)
    let back = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    #expect(back["text"] as? String == "quote \" backslash \\ newline \n tab \t bell \u{7} é ✓")
    #expect(text.contains(#""yes":true"#) && text.contains(#""no":false"#) && text.contains(#""whole":3"#))
    #expect(text.contains(#""claims":{"admin":true,"level":3,"none":null,"ratio":0.5,"tags":["a"]}"#))
    #expect(text.contains(#""int64":1800000000"#) && text.contains(#""double":1.25"#))
    #expect(text.hasPrefix(#"{"array":[1,"two",false],"#))
}

@Test("Body keys whose capital is longer than one character convert instead of crashing", arguments: [
    ("a_ß", "aSS"), ("new_ﬁle", "newFIle"), ("display_name", "displayName"), ("_leading", "leading"), ("plain", "plain"),
])
func snakeCaseKeysWithMultiCharacterCapitals(key: String, expected: String) {
    // "ß".uppercased() is "SS": building one Character from it ended the process (one request, no login).
    #expect(RequestBody.camelCase(key) == expected)
}
