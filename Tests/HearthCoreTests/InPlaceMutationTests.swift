import Testing
@testable import HearthCore

/// A write to data nobody else holds must mutate in place: copying would make every write pay for
/// a B-tree path (or a whole small map) of allocations. These tests watch storage identity.
struct InPlaceMutationTests {
    func storageIdentity(_ map: ChildrenMap) -> UnsafeRawPointer? {
        switch map.storage {
        case nil: return nil
        case .small(let entries)?: return entries.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
        case .tree(let node)?: return UnsafeRawPointer(Unmanaged.passUnretained(node).toOpaque())
        }
    }

    @Test(arguments: [5, 5000])
    func unsharedMapsMutateInPlace(size: Int) {
        var map = ChildrenMap(sortedUniqueElements: (0..<size).map { (ChildKey("k\($0)"), Node($0)) }.sorted { $0.0 < $1.0 })
        let before = storageIdentity(map)
        map.modifyExisting(ChildKey("k3")) { $0 = Node(-1) }
        #expect(storageIdentity(map) == before)
        map[ChildKey("k4")] = Node(-2)
        #expect(storageIdentity(map) == before)
        #expect(map[ChildKey("k3")] == Node(-1) && map[ChildKey("k4")] == Node(-2))
    }

    @Test func sharedMapsCopyAndLeaveTheOriginalAlone() {
        var map = ChildrenMap(sortedUniqueElements: (0..<5000).map { (ChildKey("k\($0)"), Node($0)) }.sorted { $0.0 < $1.0 })
        let copy = map
        map[ChildKey("k4")] = Node(-2)
        #expect(storageIdentity(map) != storageIdentity(copy))
        #expect(copy[ChildKey("k4")] == Node(4))
    }

    @Test func deepWritesIntoAnUnsharedTreeDoNotCopyTheLocationsAbove() throws {
        var tree = DatabaseTree()
        for g in 0..<40 { for k in 0..<40 { try tree.set(Path("items/g\(g)/k\(k)"), to: Node(k)) } }
        let items = storageIdentity(tree.value(at: "items").children)
        let group = storageIdentity(tree.value(at: "items/g7").children)
        try tree.set("items/g7/k3", to: Node(99))
        #expect(storageIdentity(tree.value(at: "items").children) == items)
        #expect(storageIdentity(tree.value(at: "items/g7").children) == group)
    }
}
