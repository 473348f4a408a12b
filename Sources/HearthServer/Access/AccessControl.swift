import HearthCore
import HearthProtocol
import HearthWire
import HearthRules
import HearthStorage

/// Who a request or connection acts as. An admin (the emulator's `owner`, the admin token, a verified
/// service credential) bypasses the rules, as Firebase's service accounts do; everyone else is decided
/// by the namespace's rules with `auth` as the rules' `auth` variable (nil when signed out).
struct Caller: Sendable {
    var isAdmin: Bool
    /// `{"uid": …, "provider": …, "token": {claims}}`, or nil.
    var auth: Node?
    /// When the verified token this caller showed expires (milliseconds since the epoch); nil when it
    /// never does (admins, signed-out callers, the emulator's unsigned tokens).
    var expiresAt: Int64? = nil
    /// The account a signed ID token speaks for, and when the token was issued (seconds): checked again
    /// once a second, so a disabled or deleted account or a changed password ends the caller's access.
    var account: (uid: String, issuedAt: Int64)? = nil
    /// The console session whose cookie made this caller the admin: its streams end with the session.
    var consoleSession: String? = nil

    func hasExpired(now: Int64) -> Bool { expiresAt.map { now >= $0 } ?? false }

    static let signedOut = Caller(isAdmin: false, auth: nil)
    static let admin = Caller(isAdmin: true, auth: nil)

}

/// The error a rules denial reports: REST answers 401 `Permission denied`, realtime `permission_denied`.
struct PermissionDenied: Error, CustomStringConvertible {
    let decision: RuleDecision
    var description: String { "Permission denied" }
}

extension Namespace {
    /// May `caller` read (get, listen to or query) `path`? Rules see the committed tree.
    func mayRead(_ caller: Caller, at path: Path, query: QueryParams?, now: Int64) -> Bool {
        if caller.isAdmin { return true }
        return rules.canRead(at: path, root: database.root, auth: caller.auth, now: now, query: query).allowed
    }

    /// The check a write by `caller` must pass, run by ``DurableDatabase`` on the tree the write builds
    /// on (pending writes included) and its result; nil for an admin.
    func writeCheck(_ caller: Caller, now: Int64) -> DurableDatabase.WriteCheck? {
        // No check, no trial copy of the write's path (see DurableDatabase.write).
        if caller.isAdmin || rules.allowsEveryWrite { return nil }
        let rules = rules, auth = caller.auth
        return { locations, before, after in
            let decision = rules.canWrite(locations: locations, oldRoot: before, newRoot: after, auth: auth, now: now)
            return decision.allowed ? nil : PermissionDenied(decision: decision)
        }
    }

    /// The check for a compare-and-set write (a transaction's put with `h`, a REST `if-match`): a stale
    /// hash is answered `datastale` (412) before the rules decide, as Firebase does, so that a transaction
    /// whose rules only allow moving from the current value (a counter moved by one) is retried on that
    /// value instead of refused. Only for callers who may read the location: to anyone else, a stale
    /// answer would tell whether a guessed value is there, so the rules decide first (see
    /// DurableDatabase.set).
    func compareAndSetCheck(_ check: DurableDatabase.WriteCheck?, caller: Caller, at path: Path, ifHash: String?, now: Int64)
        -> DurableDatabase.WriteCheck?
    {
        guard let check, let ifHash, mayRead(caller, at: path, query: nil, now: now) else { return check }
        return { locations, before, after in
            if before.child(at: path).hash != ifHash { return DataError(.hashMismatch, "Transaction hash does not match") }
            return check(locations, before, after)
        }
    }

    /// Replaces the rules and takes back what they no longer allow: streams and realtime listens that
    /// may no longer read are cancelled (`cancel` / `c`), as Firebase does (docs/protocol.md §3.3, §8.1).
    func replaceRules(_ new: RuleSet, now: Int64) {
        rules = new
        rulesDeployed = true
        revokeUnreadable(now: now)
    }

    /// Cancels every stream and realtime listen whose caller may no longer read it.
    func revokeUnreadable(now: Int64) {
        for stream in Array(streams.values) where !mayRead(stream.caller, at: stream.path, query: stream.params, now: now) {
            stream.cancel()
        }
        for session in Array(listeners.realtimeSessions) {
            session.revokeUnreadableListens(now: now)
        }
    }
}

extension Namespace {
    /// Readies the index a query at `path` orders by: when the rules declare it (`.indexOn` at a location
    /// matching `path`), the database keeps a ``ChildIndex`` there from now on, so this query and later
    /// ones read a window instead of sorting the location. Returns false for an order by child or value
    /// the rules do not index: Firebase's `no_index` warning (docs/protocol.md §2.4.1), which clients log
    /// with the `.indexOn` to add. Hearth filters on the server either way.
    @discardableResult
    func prepareIndex(for params: QueryParams, at path: Path) -> Bool {
        switch params.index {
        case .key, .priority: return true
        case .value, .child: break
        }
        // Nobody wrote these rules: no advice to add an `.indexOn` to them (the emulator's open default).
        if !rulesDeployed { return true }
        guard rules.indexes.contains(where: { $0.matches(path) && $0.queryIndexes.contains(params.index) }) else {
            return false
        }
        database.ensureIndex(at: path, by: params.index)
        return true
    }
}

extension DatabaseServer {
    /// Callers whose verified token has expired lose it (once a second, from `tick`): a realtime connection
    /// gets `ac` (§3.4), goes on signed out and loses the listens that needed the token; a stream gets
    /// `auth_revoked` and ends, and Python's client reconnects with a fresh token (§6.7).
    ///
    /// Callers whose account no longer accepts their token (disabled, deleted, password changed: see
    /// ``IdentityService/accountAllows(uid:issuedAt:)``) lose it the same way, the realtime `ac` saying
    /// `auth_revoked`. Each account is looked up once per pass.
    func expireCredentials(now: Int64) {
        var verdicts: [String: Bool] = [:]
        func revoked(_ caller: Caller) -> Bool { !credentials.stillAccepted(caller, verdicts: &verdicts) }
        for namespace in namespaces.all {
            for stream in Array(namespace.streams.values) where stream.caller.hasExpired(now: now) || revoked(stream.caller) {
                stream.revokeAuth()
            }
            for session in Array(namespace.listeners.realtimeSessions) {
                if session.caller.hasExpired(now: now) {
                    session.credentialExpired(now: now, push: WireEncoder.authExpired)
                } else if revoked(session.caller) {
                    session.credentialExpired(now: now, push: WireEncoder.authRevoked)
                }
            }
        }
    }
}
