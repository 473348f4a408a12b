/// The rules under construction for one location and its descendants (Bolt calls this a validator).
///
/// Keys keep insertion order, as Firebase's compiler output does. A key starting with `.` holds a list of
/// rule terms (`.read`, `.write`, `.validate`) that are AND-ed when converted to text; any other key is a
/// child location (`name`, `$key1`, `$other`).
struct Validator: Sendable {
    enum Entry: Sendable {
        case terms([Expression])
        case child(Validator)
        /// `.indexOn` from a path's `index()` method.
        case names([String])
    }

    private(set) var keys: [String] = []
    private var entries: [String: Entry] = [:]
    /// Capture variables of the path statement placed here (`uid` → `$uid`); descendants inherit them.
    var scope: [String: Expression]?

    var isEmpty: Bool { keys.isEmpty }

    /// Keys here and below: what expanding types into this validator has cost.
    var locationCount: Int {
        entries.values.reduce(keys.count) { total, entry in
            if case .child(let child) = entry { return total + child.locationCount }
            return total
        }
    }

    subscript(key: String) -> Entry? { entries[key] }

    /// A validator holding one list of terms.
    init(_ rule: String, _ terms: [Expression]) {
        append(terms, to: rule)
    }

    init() {}

    mutating func append(_ terms: [Expression], to rule: String) {
        if case .terms(let existing) = entries[rule] {
            entries[rule] = .terms(existing + terms)
        } else {
            if entries[rule] == nil { keys.append(rule) }
            entries[rule] = .terms(terms)
        }
    }

    /// Sets a list of names such as `.indexOn`, replacing any earlier list.
    mutating func setNames(_ names: [String], at key: String) {
        if entries[key] == nil { keys.append(key) }
        entries[key] = .names(names)
    }

    mutating func ensureChild(_ key: String) {
        withChild(key) { _ in }
    }

    /// Merges `other` into this validator: term lists are concatenated, children merged recursively
    /// (Bolt's `extendValidator`).
    mutating func extend(with other: Validator) {
        for key in other.keys {
            switch other.entries[key]! {
            case .terms(let terms):
                append(terms, to: key)
            case .child(let child):
                withChild(key) { $0.extend(with: child) }
            case .names(let names):
                setNames(names, at: key)
            }
        }
    }

    /// Replaces every term list, here and below, by the single expression `combine` makes of it.
    mutating func combineTerms(_ combine: ([Expression]) -> Expression) {
        for key in keys {
            switch entries[key]! {
            case .terms(let terms): entries[key] = .terms([combine(terms)])
            case .child: withChild(key) { $0.combineTerms(combine) }
            case .names: break
            }
        }
    }
}

extension Validator {
    /// Runs `body` on the child at `key`, created empty if missing.
    mutating func withChild(_ key: String, _ body: (inout Validator) -> Void) {
        var child: Validator
        if case .child(let existing) = entries[key] {
            child = existing
        } else {
            if entries[key] == nil { keys.append(key) }
            child = Validator()
        }
        entries[key] = nil
        body(&child)
        entries[key] = .child(child)
    }
}
