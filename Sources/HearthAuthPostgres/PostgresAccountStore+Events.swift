import Foundation
public import HearthAuth
import HearthPostgres

/// The auth feed in `hearth_auth_events` (docs/functions.md, "Auth triggers"): every node records into
/// and reads the one table. An event is inserted in the transaction of its change, behind an advisory
/// lock held to the commit, so positions become visible in the order they were given (a reader never
/// passes one that a slower transaction has yet to commit).
extension PostgresAccountStore {
    /// 'HrAE' as a number: the lock every event-recording transaction takes.
    static let eventOrderLockKey: Int64 = 0x4872_4145

    static let createEvents: [PostgresStatement] = [
        PostgresStatement("SELECT pg_advisory_xact_lock(\(PostgresAuthSchema.creationLockKey))"),
        PostgresStatement("""
            CREATE TABLE IF NOT EXISTS hearth_auth_events (
                position bigserial PRIMARY KEY,
                time bigint NOT NULL,
                type text NOT NULL,
                uid text COLLATE "C" NOT NULL,
                account text NOT NULL
            )
            """),
    ]

    /// Creates the events table when an older Hearth made the others without it.
    static func prepareEvents(_ database: PostgresDatabase) throws {
        let exists = try database.query("SELECT to_regclass('hearth_auth_events') IS NOT NULL", doing: "checking the auth tables")
        if try exists.first?.boolean(at: 0) != true { _ = try database.run(createEvents, doing: "creating the auth events table") }
    }

    /// The statements recording `kind` of `user`, to run in its change's transaction.
    static func record(_ kind: AuthEvent.Kind, _ user: UserRecord) -> [PostgresStatement] {
        [
            PostgresStatement("SELECT pg_advisory_xact_lock(\(eventOrderLockKey))"),
            PostgresStatement(
                "INSERT INTO hearth_auth_events (time, type, uid, account) VALUES ($1, $2, $3, $4)",
                [.int8(Int64(Date().timeIntervalSince1970 * 1000)), .text(kind.rawValue), .text(user.localId), .text(user.eventJSON)]),
        ]
    }

    /// Every ``AuthEventRetention/everyEvents``th event this node records, removes those past the
    /// retention's age or count and notes the last position removed.
    func trimEventsNow(andThen recorded: Int64) {
        guard recorded % AuthEventRetention.everyEvents == 0 else { return }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        _ = try? database.run(
            [
                PostgresStatement("""
                    WITH gone AS (
                        DELETE FROM hearth_auth_events
                        WHERE time < $1 OR position <= (SELECT max(position) FROM hearth_auth_events) - $2
                        RETURNING position)
                    INSERT INTO hearth_auth_settings (name, value) SELECT 'auth_events_trimmed', max(position)::text FROM gone HAVING count(*) > 0
                    ON CONFLICT (name) DO UPDATE SET value = greatest(hearth_auth_settings.value::bigint, excluded.value::bigint)::text
                    """,
                    [.int8(now - AuthEventRetention.maxAgeMilliseconds), .int8(AuthEventRetention.maxEvents)]),
            ],
            doing: "trimming the auth events")
    }

    public func authEvents(after position: Int64, limit: Int) throws -> AuthEventPage {
        let results = try database.run(
            [
                PostgresStatement(
                    "SELECT position, time, type, uid, account FROM hearth_auth_events WHERE position > $1 ORDER BY position LIMIT $2",
                    [.int8(position), .int8(Int64(max(0, limit)))]),
                PostgresStatement("SELECT coalesce(max(position), 0) FROM hearth_auth_events"),
                PostgresStatement("SELECT coalesce((SELECT value::bigint FROM hearth_auth_settings WHERE name = 'auth_events_trimmed'), 0)"),
            ],
            doing: "reading the auth events")
        var events: [AuthEvent] = []
        for row in results[0] {
            guard let position = try row.int64(at: 0), let time = try row.int64(at: 1), let kind = try row.string(at: 2).flatMap(AuthEvent.Kind.init(rawValue:)),
                let uid = try row.string(at: 3), let account = try row.string(at: 4)
            else { continue }
            events.append(AuthEvent(position: position, time: time, kind: kind, uid: uid, userJSON: account))
        }
        let newest = try results[1].first?.int64(at: 0) ?? 0
        let trimmed = try results[2].first?.int64(at: 0) ?? 0
        return AuthEventPage(events: events, head: max(newest, trimmed), trimmedThrough: trimmed)
    }
}
