import Foundation
import HearthSQL
import HearthProtocol
import HearthTriggers

/// ``HookStorage`` on a single node: `hooks.sqlite` in the data directory. Thread-safe (one connection
/// behind ``SQLiteDatabase``'s lock); every hook is this node's to deliver.
final class SQLiteHookStore: HookStorage {
    let database: SQLiteDatabase

    init(path: String) throws {
        database = try SQLiteDatabase(path: path)
        try database.executeScript(
            """
            CREATE TABLE IF NOT EXISTS documents(namespace TEXT PRIMARY KEY, json TEXT NOT NULL, deployed_at INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS cursors(namespace TEXT NOT NULL, hook TEXT NOT NULL, position INTEGER NOT NULL,
                next_index INTEGER NOT NULL, PRIMARY KEY(namespace, hook));
            CREATE TABLE IF NOT EXISTS dead_letters(namespace TEXT NOT NULL, hook TEXT NOT NULL, event_id TEXT NOT NULL,
                position INTEGER NOT NULL, body BLOB NOT NULL, attempts INTEGER NOT NULL, error TEXT NOT NULL,
                parked_at INTEGER NOT NULL, redeliver INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(namespace, hook, event_id));
            CREATE TABLE IF NOT EXISTS deliveries(id INTEGER PRIMARY KEY AUTOINCREMENT, namespace TEXT NOT NULL, hook TEXT NOT NULL,
                event_id TEXT NOT NULL, attempt INTEGER NOT NULL, status INTEGER NOT NULL, latency_ms INTEGER NOT NULL,
                excerpt TEXT NOT NULL, time INTEGER NOT NULL);
            CREATE INDEX IF NOT EXISTS deliveries_by_hook ON deliveries(namespace, hook, id);
            """)
    }

    func close() { database.close() }

    // MARK: One node: every hook is this node's

    var isShared: Bool { false }
    func claim(_ namespace: String, _ hook: String) throws -> Bool { true }
    func release(_ namespace: String, _ hook: String) {}
    func owner(_ namespace: String, _ hook: String) throws -> String? { nil }

    // MARK: Documents

    func documents() throws -> [(namespace: String, document: HooksDocument)] {
        try database.query("SELECT namespace, json FROM documents ORDER BY namespace").compactMap { row in
            guard let namespace = row[0].text, let json = row[1].text else { return nil }
            return (namespace, try HooksDocument(json: Array(json.utf8)))
        }
    }

    func document(_ namespace: String) throws -> HooksDocument? {
        guard let json = try database.query("SELECT json FROM documents WHERE namespace = ?1", [.text(namespace)]).first?[0].text else { return nil }
        return try HooksDocument(json: Array(json.utf8))
    }

    /// Saves `document` and forgets the cursors, dead letters and log of hooks it no longer has.
    func save(_ document: HooksDocument, for namespace: String, at time: Int64) throws {
        let names = Set(document.hooks.map(\.name))
        try database.transaction { run in
            _ = try run(
                "INSERT INTO documents(namespace, json, deployed_at) VALUES(?1, ?2, ?3) ON CONFLICT(namespace) DO UPDATE SET json = ?2, deployed_at = ?3",
                [.text(namespace), .text(document.json(revealingSecrets: true)), .integer(time)])
            for table in ["cursors", "dead_letters", "deliveries"] {
                for row in try run("SELECT DISTINCT hook FROM \(table) WHERE namespace = ?1", [.text(namespace)]) {
                    guard let hook = row[0].text, !names.contains(hook) else { continue }
                    _ = try run("DELETE FROM \(table) WHERE namespace = ?1 AND hook = ?2", [.text(namespace), .text(hook)])
                }
            }
        }
    }

    // MARK: Cursors

    func cursor(_ namespace: String, _ hook: String) throws -> HookCursor? {
        guard let row = try database.query("SELECT position, next_index FROM cursors WHERE namespace = ?1 AND hook = ?2", [.text(namespace), .text(hook)]).first,
            let position = row[0].integer, let next = row[1].integer
        else { return nil }
        return HookCursor(position: position, nextIndex: Int(next))
    }

    func saveCursor(_ cursor: HookCursor, _ namespace: String, _ hook: String) throws {
        try database.query(
            "INSERT INTO cursors(namespace, hook, position, next_index) VALUES(?1, ?2, ?3, ?4) ON CONFLICT(namespace, hook) DO UPDATE SET position = ?3, next_index = ?4",
            [.text(namespace), .text(hook), .integer(cursor.position), .integer(Int64(cursor.nextIndex))])
    }

    // MARK: Dead letters

    /// Parks an event whose attempts ran out, and moves the cursor past it, in one transaction: the event
    /// is either still to deliver or parked, never neither.
    func park(_ letter: DeadLetter, cursor: HookCursor?, _ namespace: String, _ hook: String) throws {
        try database.transaction { run in
            _ = try run(
                """
                INSERT INTO dead_letters(namespace, hook, event_id, position, body, attempts, error, parked_at, redeliver)
                VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0)
                ON CONFLICT(namespace, hook, event_id) DO UPDATE SET attempts = attempts + ?6, error = ?7, parked_at = ?8, redeliver = 0
                """,
                [.text(namespace), .text(hook), .text(letter.eventId), .integer(letter.position), .blob(letter.body), .integer(Int64(letter.attempts)),
                 .text(letter.error), .integer(letter.parkedAt)])
            if let cursor {
                _ = try run(
                    "INSERT INTO cursors(namespace, hook, position, next_index) VALUES(?1, ?2, ?3, ?4) ON CONFLICT(namespace, hook) DO UPDATE SET position = ?3, next_index = ?4",
                    [.text(namespace), .text(hook), .integer(cursor.position), .integer(Int64(cursor.nextIndex))])
            }
        }
    }

    func deadLetters(_ namespace: String, hook: String?) throws -> [DeadLetter] {
        var sql = "SELECT hook, event_id, position, body, attempts, error, parked_at, redeliver FROM dead_letters WHERE namespace = ?1"
        var parameters: [SQLiteValue] = [.text(namespace)]
        if let hook {
            sql += " AND hook = ?2"
            parameters.append(.text(hook))
        }
        return try database.query(sql + " ORDER BY position, event_id", parameters).compactMap(DeadLetter.init(row:))
    }

    /// Marks dead letters for redelivery (one by id, or all of the hook's); how many were marked.
    func markForRedelivery(_ namespace: String, _ hook: String, eventId: String?) throws -> Int {
        try database.transaction { run in
            var sql = "UPDATE dead_letters SET redeliver = 1 WHERE namespace = ?1 AND hook = ?2"
            var parameters: [SQLiteValue] = [.text(namespace), .text(hook)]
            if let eventId {
                sql += " AND event_id = ?3"
                parameters.append(.text(eventId))
            }
            _ = try run(sql, parameters)
            return Int(try run("SELECT changes()", [])[0][0].integer ?? 0)
        }
    }

    func redeliveries(_ namespace: String, _ hook: String) throws -> [DeadLetter] {
        try database.query(
            "SELECT hook, event_id, position, body, attempts, error, parked_at, redeliver FROM dead_letters WHERE namespace = ?1 AND hook = ?2 AND redeliver = 1 ORDER BY position, event_id",
            [.text(namespace), .text(hook)]
        ).compactMap(DeadLetter.init(row:))
    }

    func removeDeadLetter(_ namespace: String, _ hook: String, eventId: String) throws {
        try database.query("DELETE FROM dead_letters WHERE namespace = ?1 AND hook = ?2 AND event_id = ?3", [.text(namespace), .text(hook), .text(eventId)])
    }

    // MARK: The delivery log

    func log(_ attempt: DeliveryAttempt, _ namespace: String, _ hook: String) throws {
        try database.transaction { run in
            _ = try run(
                "INSERT INTO deliveries(namespace, hook, event_id, attempt, status, latency_ms, excerpt, time) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                [.text(namespace), .text(hook), .text(attempt.eventId), .integer(Int64(attempt.attempt)), .integer(Int64(attempt.status)),
                 .integer(attempt.latencyMilliseconds), .text(attempt.excerpt), .integer(attempt.time)])
            // Trimmed now and then rather than on every row.
            let id = try run("SELECT last_insert_rowid()", [])[0][0].integer ?? 0
            if id % 100 == 0 {
                _ = try run(
                    "DELETE FROM deliveries WHERE namespace = ?1 AND hook = ?2 AND id <= (SELECT id FROM deliveries WHERE namespace = ?1 AND hook = ?2 ORDER BY id DESC LIMIT 1 OFFSET ?3)",
                    [.text(namespace), .text(hook), .integer(Int64(ServerLimits.hookLogRowsMax))])
            }
        }
    }

    func deliveries(_ namespace: String, hook: String?, limit: Int) throws -> [(hook: String, attempt: DeliveryAttempt)] {
        var sql = "SELECT hook, event_id, attempt, status, latency_ms, excerpt, time FROM deliveries WHERE namespace = ?1"
        var parameters: [SQLiteValue] = [.text(namespace)]
        if let hook {
            sql += " AND hook = ?2"
            parameters.append(.text(hook))
        }
        parameters.append(.integer(Int64(limit)))
        return try database.query(sql + " ORDER BY id DESC LIMIT ?\(parameters.count)", parameters).compactMap { row in
            guard let hook = row[0].text, let eventId = row[1].text, let attempt = row[2].integer, let status = row[3].integer,
                let latency = row[4].integer, let excerpt = row[5].text, let time = row[6].integer
            else { return nil }
            return (hook, DeliveryAttempt(eventId: eventId, attempt: Int(attempt), status: Int(status), latencyMilliseconds: latency, excerpt: excerpt, time: time))
        }
    }

    func counts(_ namespace: String, _ hook: String) throws -> (delivered: Int, failed: Int, dead: Int) {
        let log = try database.query(
            "SELECT coalesce(sum(status BETWEEN 200 AND 299), 0), coalesce(sum(status NOT BETWEEN 200 AND 299), 0) FROM deliveries WHERE namespace = ?1 AND hook = ?2",
            [.text(namespace), .text(hook)])
        let dead = try database.query("SELECT count(*) FROM dead_letters WHERE namespace = ?1 AND hook = ?2", [.text(namespace), .text(hook)])
        return (Int(log[0][0].integer ?? 0), Int(log[0][1].integer ?? 0), Int(dead[0][0].integer ?? 0))
    }
}

extension DeadLetter {
    init?(row: [SQLiteValue]) {
        guard let hook = row[0].text, let eventId = row[1].text, let position = row[2].integer, let body = row[3].blob,
            let attempts = row[4].integer, let error = row[5].text, let parkedAt = row[6].integer, let redeliver = row[7].integer
        else { return nil }
        self.init(hook: hook, eventId: eventId, position: position, body: body, attempts: Int(attempts), error: error, parkedAt: parkedAt, redeliver: redeliver != 0)
    }
}
