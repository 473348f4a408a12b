public import HearthCore

/// The locations a commit wrote, asked whether another write's locations overlap them (one at or
/// below the other): writes that do not overlap commute, so either order stores the same records.
///
/// Two sets instead of comparing every pair: a location overlaps when it is one of the written ones or
/// above one (`reaching`), or when one of its ancestors was written. O(depth) per question, so a commit
/// of thousands of writes against thousands in flight stays linear.
public struct WrittenLocations: Sendable {
    private var written: Set<Path> = []
    /// Every written location and each of its ancestors.
    private var reaching: Set<Path> = []

    public init(_ locations: [Path]) {
        for location in locations where written.insert(location).inserted {
            var current: Path? = location
            while let path = current, reaching.insert(path).inserted { current = path.parent }
        }
    }

    public var isEmpty: Bool { written.isEmpty }

    /// True when a write at `location` can change, or depends on, what was written.
    public func overlaps(_ location: Path) -> Bool {
        if reaching.contains(location) { return true }
        var current = location.parent
        while let ancestor = current {
            if written.contains(ancestor) { return true }
            current = ancestor.parent
        }
        return false
    }
}
