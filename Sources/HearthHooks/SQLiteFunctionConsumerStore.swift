import Foundation
import HearthCore
import HearthSQL
import HearthProtocol
import HearthTriggers

/// ``FunctionConsumerStorage`` on a single node: in `hooks.sqlite`, beside the webhooks' tables.
struct SQLiteFunctionConsumerStore: FunctionConsumerStorage {
    let database: SQLiteDatabase

    init(database: SQLiteDatabase) throws {
        self.database = database
        try database.executeScript(
            """
            CREATE TABLE IF NOT EXISTS consumers(namespace TEXT NOT NULL, name TEXT NOT NULL, paths TEXT NOT NULL,
                after INTEGER NOT NULL, seen_at INTEGER NOT NULL, auth_after INTEGER, PRIMARY KEY(namespace, name));
            CREATE TABLE IF NOT EXISTS parked(namespace TEXT NOT NULL, consumer TEXT NOT NULL, function TEXT NOT NULL,
                event_id TEXT NOT NULL, position INTEGER NOT NULL, event TEXT NOT NULL, attempts INTEGER NOT NULL,
                error TEXT NOT NULL, parked_at INTEGER NOT NULL, PRIMARY KEY(namespace, consumer, function, event_id));
            """)
        // Files from before auth triggers.
        let columns = try database.query("PRAGMA table_info(consumers)").compactMap { $0[1].text }
        if !columns.contains("auth_after") { try database.executeScript("ALTER TABLE consumers ADD COLUMN auth_after INTEGER;") }
    }

    func consumers(_ namespace: String?) throws -> [FunctionConsumer] {
        var sql = "SELECT namespace, name, paths, after, seen_at, auth_after FROM consumers"
        var parameters: [SQLiteValue] = []
        if let namespace {
            sql += " WHERE namespace = ?1"
            parameters.append(.text(namespace))
        }
        return try database.query(sql + " ORDER BY namespace, name", parameters).compactMap(FunctionConsumer.init(row:))
    }

    func consumer(_ namespace: String, _ name: String) throws -> FunctionConsumer? {
        try database.query(
            "SELECT namespace, name, paths, after, seen_at, auth_after FROM consumers WHERE namespace = ?1 AND name = ?2", [.text(namespace), .text(name)]
        ).first.flatMap(FunctionConsumer.init(row:))
    }

    /// Registers `consumer`, keeping the cursor of one registered before under its name.
    func register(_ consumer: FunctionConsumer) throws {
        try database.query(
            """
            INSERT INTO consumers(namespace, name, paths, after, seen_at) VALUES(?1, ?2, ?3, ?4, ?5)
            ON CONFLICT(namespace, name) DO UPDATE SET paths = ?3, seen_at = ?5
            """,
            [.text(consumer.namespace), .text(consumer.name), .text(consumer.pathsJSON), .integer(consumer.after), .integer(consumer.seenAt)])
    }

    /// Moves the cursors forward (never back: a late save from an older run must not replay events),
    /// the feed's to `after` and the auth feed's to `authAfter` (nil: leave it); false when there is no
    /// such consumer.
    func advance(_ namespace: String, _ name: String, to after: Int64?, authAfter: Int64?, at time: Int64) throws -> Bool {
        try database.transaction { run in
            _ = try run(
                """
                UPDATE consumers SET after = max(after, coalesce(?3, after)), auth_after = max(coalesce(auth_after, 0), coalesce(?4, auth_after, 0)),
                    seen_at = ?5 WHERE namespace = ?1 AND name = ?2
                """,
                [.text(namespace), .text(name), after.map(SQLiteValue.integer) ?? .null, authAfter.map(SQLiteValue.integer) ?? .null, .integer(time)])
            return (try run("SELECT changes()", [])[0][0].integer ?? 0) > 0
        }
    }

    /// Forgets the consumer, its cursor and its parked events.
    func remove(_ namespace: String, _ name: String) throws -> Bool {
        try database.transaction { run in
            _ = try run("DELETE FROM parked WHERE namespace = ?1 AND consumer = ?2", [.text(namespace), .text(name)])
            _ = try run("DELETE FROM consumers WHERE namespace = ?1 AND name = ?2", [.text(namespace), .text(name)])
            return (try run("SELECT changes()", [])[0][0].integer ?? 0) > 0
        }
    }

    // MARK: Parked events

    func park(_ event: ParkedEvent, _ namespace: String, _ consumer: String) throws {
        try database.transaction { run in
            _ = try run(
                """
                INSERT INTO parked(namespace, consumer, function, event_id, position, event, attempts, error, parked_at)
                VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                ON CONFLICT(namespace, consumer, function, event_id) DO UPDATE SET attempts = attempts + ?7, error = ?8, parked_at = ?9
                """,
                [.text(namespace), .text(consumer), .text(event.function), .text(event.eventId), .integer(event.position), .text(event.eventJSON),
                 .integer(Int64(event.attempts)), .text(event.error), .integer(event.parkedAt)])
            _ = try run(
                """
                DELETE FROM parked WHERE namespace = ?1 AND consumer = ?2 AND rowid NOT IN
                    (SELECT rowid FROM parked WHERE namespace = ?1 AND consumer = ?2 ORDER BY parked_at DESC LIMIT ?3)
                """,
                [.text(namespace), .text(consumer), .integer(Int64(ServerLimits.parkedFunctionEventsMax))])
        }
    }

    func parked(_ namespace: String, _ consumer: String) throws -> [ParkedEvent] {
        try database.query(
            "SELECT function, event_id, position, event, attempts, error, parked_at FROM parked WHERE namespace = ?1 AND consumer = ?2 ORDER BY position, function, event_id",
            [.text(namespace), .text(consumer)]
        ).compactMap(ParkedEvent.init(row:))
    }

    func parkedCount(_ namespace: String, _ consumer: String) throws -> Int {
        Int(try database.query("SELECT count(*) FROM parked WHERE namespace = ?1 AND consumer = ?2", [.text(namespace), .text(consumer)])[0][0].integer ?? 0)
    }

    /// Forgets parked events (one by id, or all of the consumer's); how many.
    func dismiss(_ namespace: String, _ consumer: String, eventId: String?) throws -> Int {
        try database.transaction { run in
            var sql = "DELETE FROM parked WHERE namespace = ?1 AND consumer = ?2"
            var parameters: [SQLiteValue] = [.text(namespace), .text(consumer)]
            if let eventId {
                sql += " AND event_id = ?3"
                parameters.append(.text(eventId))
            }
            _ = try run(sql, parameters)
            return Int(try run("SELECT changes()", [])[0][0].integer ?? 0)
        }
    }
}

extension FunctionConsumer {
    init?(row: [SQLiteValue]) {
        guard let namespace = row[0].text, let name = row[1].text, let paths = row[2].text, let after = row[3].integer, let seenAt = row[4].integer,
            let patterns = Self.patterns(pathsJSON: paths)
        else { return nil }
        self.init(namespace: namespace, name: name, patterns: patterns, after: after, seenAt: seenAt, authAfter: row.count > 5 ? row[5].integer : nil)
    }
}

extension ParkedEvent {
    init?(row: [SQLiteValue]) {
        guard let function = row[0].text, let eventId = row[1].text, let position = row[2].integer, let event = row[3].text,
            let attempts = row[4].integer, let error = row[5].text, let parkedAt = row[6].integer
        else { return nil }
        self.init(function: function, eventId: eventId, position: position, eventJSON: event, attempts: Int(attempts), error: error, parkedAt: parkedAt)
    }
}
