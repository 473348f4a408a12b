public import HearthCore

/// A location pattern of a trigger, as Cloud Functions write them: `/jokes/{jokeId}/votes`, each
/// segment a key or a `{parameter}` that matches any one key and names it in the event's `params`.
///
///     let pattern = try TriggerPattern("/jokes/{jokeId}")
///     pattern.parameters(of: Path("jokes/j1"))   // ["jokeId": "j1"]
public struct TriggerPattern: Sendable, Hashable, CustomStringConvertible {
    public enum Segment: Sendable, Hashable {
        case key(ChildKey)
        case parameter(String)
    }

    public let segments: [Segment]

    /// Most segments a pattern may have (Firebase's depth limit for a location).
    public static let depthMax = 32

    public init(_ text: String) throws(TriggerError) {
        // Split on the scalar "/", not on Characters: a combining mark after a slash would make the two
        // one Character, and the pattern would not read back as itself.
        var scalars = Substring(text).unicodeScalars[...]
        if scalars.first == "/" { scalars = scalars.dropFirst() }
        guard !scalars.isEmpty else { throw TriggerError("the pattern \"\(text)\" names the root: a trigger watches a location below it, such as /jokes/{jokeId}") }
        let parts = scalars.split(separator: "/", omittingEmptySubsequences: false).map { String(String.UnicodeScalarView($0)) }
        guard parts.count <= Self.depthMax else { throw TriggerError("the pattern \"\(text)\" is deeper than \(Self.depthMax) segments") }
        var names = Set<String>()
        var segments: [Segment] = []
        for part in parts {
            let inner = part.unicodeScalars
            if inner.first == "{" && inner.last == "}" && inner.count >= 2 {
                let name = String(String.UnicodeScalarView(inner.dropFirst().dropLast()))
                guard Self.isParameterName(name) else {
                    throw TriggerError("\"\(part)\" in \"\(text)\" is not a parameter: a name is a letter or _ then letters, digits or _")
                }
                guard names.insert(name).inserted else { throw TriggerError("the parameter {\(name)} appears twice in \"\(text)\"") }
                segments.append(.parameter(name))
            } else {
                let key = ChildKey(part)
                do { try KeyValidation.validate(key) } catch {
                    throw TriggerError("\"\(part)\" in \"\(text)\" is not a key: \(error.message)")
                }
                if inner.contains(where: { $0 == "{" || $0 == "}" || $0 == "*" }) {
                    throw TriggerError("\"\(part)\" in \"\(text)\": a parameter is a whole segment, such as {jokeId}; wildcards are not supported")
                }
                segments.append(.key(key))
            }
        }
        self.segments = segments
    }

    /// How many keys a matching location has.
    public var depth: Int { segments.count }

    public var description: String {
        "/" + segments.map { segment in
            switch segment {
            case .key(let key): key.string
            case .parameter(let name): "{\(name)}"
            }
        }.joined(separator: "/")
    }

    /// Whether the first `depth` keys of `path` match (`path` may be deeper).
    public func matchesPrefix(of path: Path) -> Bool {
        guard path.count >= depth else { return false }
        for (index, segment) in segments.enumerated() {
            if case .key(let key) = segment, path.keys[index] != key { return false }
        }
        return true
    }

    /// The parameters of `location`, or nil when it does not match (it must be exactly `depth` deep).
    public func parameters(of location: Path) -> [String: String]? {
        guard location.count == depth, matchesPrefix(of: location) else { return nil }
        var parameters: [String: String] = [:]
        for (index, segment) in segments.enumerated() {
            if case .parameter(let name) = segment { parameters[name] = location.keys[index].string }
        }
        return parameters
    }

    private static func isParameterName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 64 else { return false }
        let letters = first == "_" || ("a"..."z").contains(first) || ("A"..."Z").contains(first)
        return letters && name.unicodeScalars.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
    }
}

/// Why a trigger's pattern or a hooks document was refused; the message says what to change.
public struct TriggerError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The patterns a namespace's triggers watch, for the writer's side: the locations above a write whose
/// earlier values its feed entry must carry, so that a trigger sees the whole location before and after
/// (``ChangeFeedNote``'s contexts).
public struct TriggerPatterns: Sendable, Equatable {
    public private(set) var patterns: [TriggerPattern]

    public init(_ patterns: [TriggerPattern] = []) {
        var seen = Set<TriggerPattern>()
        self.patterns = patterns.filter { seen.insert($0).inserted }
    }

    public var isEmpty: Bool { patterns.isEmpty }

    /// The locations strictly above some of `changed` that a pattern matches: what a trigger needs the
    /// earlier value of beyond the changed locations themselves. Outermost only, in no particular order.
    public func contexts(of changed: [Path]) -> [Path] {
        guard !patterns.isEmpty else { return [] }
        var found: [Path] = []
        for path in changed {
            for pattern in patterns where pattern.depth < path.count && pattern.matchesPrefix(of: path) {
                let location = Path(Array(path.keys.prefix(pattern.depth)))
                if !found.contains(location) { found.append(location) }
            }
        }
        return found.count > 1 ? Path.outermost(found) : found
    }
}
