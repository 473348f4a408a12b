import HearthCore

/// Where the default listens' server cache is known whole: a location is complete when a mark is at it or
/// above it. Marks come from data the server sent whole (a `d` push, a listen's `ok`, an acknowledged
/// write) and hold only while a default listen at or above them keeps that data current; ``SyncTree``
/// drops the others when a listen goes.
///
/// No mark lies below another (a mark covers everything below it), so the marks stay as few as the
/// locations listened to, however many pushes arrive below them.
struct CompleteLocations: Sendable {
    private var marks = PathTrie<Path>()

    /// Whether the data at `path` is complete: a mark at or above it.
    func contains(_ path: Path) -> Bool {
        !marks.valuesAtOrAbove(path).isEmpty
    }

    /// Marks `path` complete; marks below it are covered by it and go.
    mutating func mark(_ path: Path) {
        guard !contains(path) else { return }
        for below in marks.valuesBelow(path) { marks.remove(at: below) { _ in true } }
        marks.insert(path, at: path)
    }

    mutating func unmark(_ path: Path) {
        marks.remove(at: path) { _ in true }
    }

    /// The marks at `path` and below it.
    func marks(atOrBelow path: Path) -> [Path] { marks.valuesAtOrBelow(path) }

    /// The marks strictly below `path`.
    func marks(below path: Path) -> [Path] { marks.valuesBelow(path) }

    /// The keys of `path`'s children that are marked themselves: children known whole below a location
    /// that is not.
    func markedChildKeys(of path: Path) -> [ChildKey] {
        marks.childValues(of: path).map(\.key)
    }
}
