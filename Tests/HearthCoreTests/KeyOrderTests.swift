import Testing
@testable import HearthCore

@Test func placeholder() { #expect(ChildKey("2") < ChildKey("10")) }
