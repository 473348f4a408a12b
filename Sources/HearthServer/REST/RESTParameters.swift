public import HearthCore

/// An error a REST client sees: a status and `{"error": message}` (docs/protocol.md §6.6).
public struct RESTError: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    public var message: String
    /// Whether the connection is closed after the answer (oversize or unreadable requests).
    public var closesConnection = false

    public init(_ status: Int, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { "\(status) \(message)" }

    /// A rules denial, or a credential that may not do this: exactly what Firebase sends (§6.6).
    public static let permissionDenied = RESTError(401, "Permission denied")
}

/// What a REST URL asks for: the database path and every query parameter of §6.4, validated.
///
///     let target = try RESTTarget(path: "/users/ada.json", queryItems: [("print", "pretty")])
///     // target.path == "users/ada", target.print == .pretty
public struct RESTTarget: Sendable {
    public enum Print: Sendable, Equatable { case normal, pretty, silent }

    /// The database location (`/users/ada/.json` and `/users/ada.json` are both `users/ada`).
    public var path: Path
    public var namespace: String?
    public var print = Print.normal
    public var shallow = false
    public var exportFormat = false
    public var callback: String?
    public var download: String?
    /// The REST query (orderBy, ranges, limits), when any query parameter was given.
    public var query: QueryParams?
    /// `auth=` or `access_token=`.
    public var credential: String?
    /// `auth_variable_override=`, parsed: `.empty` means "as unauthenticated".
    public var authVariableOverride: Node?
    public var methodOverride: String?

    /// Every parameter Hearth knows; any other is refused with 400, as Firebase refuses unknown ones.
    static let knownParameters: Set<String> = [
        "auth", "access_token", "auth_variable_override", "ns", "print", "shallow", "format", "callback", "download",
        "timeout", "writeSizeLimit", "disableTriggers", "orderBy", "startAt", "endAt", "equalTo", "startAfter",
        "endBefore", "limitToFirst", "limitToLast", "x-http-method-override",
    ]

    /// Reads a data URL. `path` is percent-decoded and must end in `.json`.
    public init(path rawPath: String, queryItems: [(name: String, value: String)]) throws(RESTError) {
        guard rawPath.hasSuffix(".json") else {
            throw RESTError(404, "Not found: data URLs end in .json, like /users/ada.json")
        }
        path = Path(String(rawPath.dropLast(".json".count)))
        let keys = path.keys
        // The server's reserved endpoints (§6.1, §8): `/.settings/…`, `/.inspect/…`, `/.info`, `/.feed`,
        // `/.history` (docs/feed.md) and `/.restore` (docs/operations.md).
        let first = keys.first?.string
        let reserved = first == ".settings" || first == ".inspect" || first == ".info" || first == ".feed" || first == ".history"
            || first == ".restore"
        for (index, key) in keys.enumerated() {
            // `.priority` may end a write path (PUT /a/.priority.json sets a priority).
            if index == keys.count - 1 && key.string == ".priority" { continue }
            if reserved { continue }
            do { try KeyValidation.validate(key, in: path) } catch { throw RESTError(400, error.message) }
        }
        do { try KeyValidation.validateLength(of: path) } catch { throw RESTError(400, error.message) }
        if path.count > Limits.pathDepthMax {
            throw RESTError(400, "Path is deeper than \(Limits.pathDepthMax) keys")
        }

        // The change feed reads from a position (FeedEndpoint).
        // …webhooks' log and dead letters are asked for by hook, a functions process's parked event by id (docs/functions.md).
        let feedParameters: Set<String> =
            first == ".feed" && keys.count == 1 ? ["after", "limit"]
            : first == ".history" && keys.count == 1 ? ["path", "before", "limit"]
            : first == ".settings" && keys.count >= 2 && (keys[1] == "hooks" || keys[1] == "functions") ? ["hook", "limit", "id"] : []
        for (name, _) in queryItems where !Self.knownParameters.contains(name) && !feedParameters.contains(name) {
            throw RESTError(400, "Invalid parameter: \(name)")
        }
        let named = QueryItemLookup(items: queryItems)
        if let ns = named["ns"], !ns.isEmpty { namespace = ns }
        switch named["print"] {
        case nil: break
        case "pretty": print = .pretty
        case "silent": print = .silent
        case let other?: throw RESTError(400, "print must be 'pretty' or 'silent', not '\(other)'")
        }
        switch named["shallow"] {
        case nil, "false": break
        case "true": shallow = true
        case let other?: throw RESTError(400, "shallow must be 'true' or 'false', not '\(other)'")
        }
        switch named["format"] {
        case nil: break
        case "export": exportFormat = true
        // `strict`: rules without comments (§8.1); for data it is the plain form.
        case "strict": break
        case let other?: throw RESTError(400, "format must be 'export' or 'strict', not '\(other)'")
        }
        callback = named["callback"]
        download = named["download"]
        credential = named["auth"] ?? named["access_token"]
        methodOverride = named["x-http-method-override"]
        if let override = named["auth_variable_override"] {
            do { authVariableOverride = try Node(json: override) } catch {
                throw RESTError(400, "auth_variable_override must be valid JSON")
            }
        }
        if let size = named["writeSizeLimit"], !["tiny", "small", "medium", "large", "unlimited"].contains(size) {
            throw RESTError(400, "writeSizeLimit must be tiny, small, medium, large or unlimited")
        }
        if let timeout = named["timeout"], !Self.isValidTimeout(timeout) {
            throw RESTError(400, "timeout must be a number followed by ms, s or min, at most 15min")
        }
        query = try Self.parseQuery(named)
    }

    /// Longest `timeout` Firebase accepts (§6.4): 15 minutes.
    static let timeoutMillisecondsMax = 15 * 60_000

    /// Whether `text` is a timeout Firebase accepts. The number is compared with the bound divided by
    /// the unit, never multiplied by it: a client's number can be anything up to Int.max.
    static func isValidTimeout(_ text: String) -> Bool {
        for (unit, scale) in [("ms", 1), ("min", 60_000), ("s", 1000)] where text.hasSuffix(unit) {
            guard let number = Int(text.dropLast(unit.count)), number >= 0 else { return false }
            return number <= timeoutMillisecondsMax / scale
        }
        return false
    }

    /// Maps `orderBy`, `startAt`/`startAfter`, `endAt`/`endBefore`, `equalTo` and the limits onto
    /// ``QueryParams`` (§6.4 → §5.7). With no `orderBy`, ranges and limits use key order (lenient,
    /// as the emulator is: firebase-tools sends `limitToFirst` alone).
    static func parseQuery(_ named: QueryItemLookup) throws(RESTError) -> QueryParams? {
        let queryNames = ["orderBy", "startAt", "endAt", "equalTo", "startAfter", "endBefore", "limitToFirst", "limitToLast"]
        guard queryNames.contains(where: { named[$0] != nil }) else { return nil }
        var params = QueryParams(index: .key)
        if let orderBy = named["orderBy"] {
            guard let node = try? Node(json: orderBy), let name = node.stringValue, !name.isEmpty else {
                throw RESTError(400, "orderBy must be a valid JSON encoded path")
            }
            switch name {
            case "$key": params.index = .key
            case "$value": params.index = .value
            case "$priority": params.index = .priority
            default:
                let childPath = Path(name)
                for key in childPath.keys {
                    do { try KeyValidation.validate(key, in: childPath) } catch {
                        throw RESTError(400, "orderBy must be a valid JSON encoded path")
                    }
                }
                params.index = .child(childPath)
            }
        }
        if let equal = named["equalTo"] {
            if named["startAt"] != nil || named["endAt"] != nil || named["startAfter"] != nil || named["endBefore"] != nil {
                throw RESTError(400, "equalTo cannot be combined with startAt, endAt, startAfter or endBefore")
            }
            let (value, name) = try parseBound(equal, parameter: "equalTo")
            params.start = QueryBound(value: value, name: name ?? .min)
            params.end = QueryBound(value: value, name: name ?? .max)
        }
        if named["startAt"] != nil && named["startAfter"] != nil {
            throw RESTError(400, "startAt and startAfter cannot both be given")
        }
        if named["endAt"] != nil && named["endBefore"] != nil {
            throw RESTError(400, "endAt and endBefore cannot both be given")
        }
        if let start = named["startAt"] {
            let (value, name) = try parseBound(start, parameter: "startAt")
            params.start = QueryBound(value: value, name: name ?? .min)
        }
        if let start = named["startAfter"] {
            let (value, name) = try parseBound(start, parameter: "startAfter")
            // Exclusive: with no key name the bound sits after every key of that value ([MAX_NAME], as JS sends).
            params.start = QueryBound(value: value, name: name ?? .max, inclusive: false)
        }
        if let end = named["endAt"] {
            let (value, name) = try parseBound(end, parameter: "endAt")
            params.end = QueryBound(value: value, name: name ?? .max)
        }
        if let end = named["endBefore"] {
            let (value, name) = try parseBound(end, parameter: "endBefore")
            params.end = QueryBound(value: value, name: name ?? .min, inclusive: false)
        }
        if named["limitToFirst"] != nil && named["limitToLast"] != nil {
            throw RESTError(400, "limitToFirst and limitToLast cannot both be given")
        }
        for (name, anchor) in [("limitToFirst", QueryLimit.Anchor.first), ("limitToLast", .last)] {
            guard let text = named[name] else { continue }
            guard let count = Int(text), count >= 0 else {
                throw RESTError(400, "\(name) must be a non-negative integer")
            }
            guard count <= QueryLimit.countMax else {
                throw RESTError(400, "\(name) must be at most \(QueryLimit.countMax)")
            }
            params.limit = QueryLimit(count: count, anchor: anchor)
        }
        if case .key = params.index {
            for bound in [params.start, params.end].compactMap({ $0 }) where bound.value.stringValue == nil {
                throw RESTError(400, "Ordering by key requires string bounds (startAt, endAt, equalTo)")
            }
        }
        return params
    }

    /// `value[,"key"]`: one complete JSON primitive, then optionally a comma and a JSON string key name.
    static func parseBound(_ text: String, parameter: String) throws(RESTError) -> (Node, BoundName?) {
        let bytes = Array(text.utf8)
        let valueEnd = endOfFirstValue(bytes)
        guard let value = try? Node(jsonBytes: Array(bytes[..<valueEnd])), !value.hasChildren else {
            throw RESTError(400, "\(parameter) must be a JSON primitive (a string in quotes, a number, a boolean or null)")
        }
        guard valueEnd < bytes.count else { return (value, nil) }
        guard bytes[valueEnd] == UInt8(ascii: ","),
            let keyNode = try? Node(jsonBytes: Array(bytes[(valueEnd + 1)...])), let key = keyNode.stringValue
        else {
            throw RESTError(400, "\(parameter) may be followed only by a comma and a JSON string key name")
        }
        return (value, BoundName(wire: key))
    }

    /// Where the first JSON value in `bytes` ends: after a closing quote for a string, else at the first comma.
    static func endOfFirstValue(_ bytes: [UInt8]) -> Int {
        guard bytes.first == UInt8(ascii: "\"") else {
            return bytes.firstIndex(of: UInt8(ascii: ",")) ?? bytes.count
        }
        var index = 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index + 1
            default: index += 1
            }
        }
        return bytes.count
    }
}

/// Query parameters by name, the last one winning. A request carries a handful, so a scan of short strings
/// is cheaper than hashing each name into a dictionary (about a fifth of a small GET's cost).
struct QueryItemLookup {
    let items: [(name: String, value: String)]

    subscript(name: String) -> String? {
        for item in items.reversed() where item.name == name { return item.value }
        return nil
    }
}
