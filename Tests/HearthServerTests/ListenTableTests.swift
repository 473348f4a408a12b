import HearthCore
import Testing

@testable import HearthServer

struct ListenTableTests {
    static func listen(_ path: String, tag: Int64? = nil) -> ListenTable.Listen {
        ListenTable.Listen(path: Path(path), tag: tag, params: nil, queryJSON: tag.map { _ in Array("{}".utf8) })
    }

    @Test("A location and tag hold one listen; the limit counts distinct ones")
    func addReplacesAndBounds() {
        var table = ListenTable(limit: 2)
        let first = table.add(Self.listen("a"))
        let again = table.add(Self.listen("a"))
        let tagged = table.add(Self.listen("a", tag: 1))
        let third = table.add(Self.listen("b"))
        #expect([first, again, tagged, third] == [.added, .replaced, .added, .overLimit])
        #expect(table.count == 2)
    }

    @Test("Removing unreadable listens returns them and keeps the rest")
    func unreadableListensAreTakenOut() {
        var table = ListenTable(limit: 10)
        for path in ["public/x", "private/y", "private/z"] { _ = table.add(Self.listen(path)) }
        let revoked = table.removeUnreadable { $0.path.first?.string != "private" }
        #expect(Set(revoked.map(\.path.description)) == ["private/y", "private/z"])
        #expect(table.count == 1)
        let removed = table.remove(ListenTable.Key(path: Path("public/x"), tag: nil))
        #expect(removed != nil && table.isEmpty)
        #expect(table.removeAll().isEmpty)
    }
}
