public import HearthHooks
public import HearthPostgres
import HearthProtocol
import HearthStorage

/// ``FunctionConsumerStorage`` for a cluster: functions processes, their cursors and parked events in
/// the shared PostgreSQL (``PostgresHookSchema``), so a process may register, save its place and park
/// events through any node.
public struct PostgresFunctionConsumerStore: FunctionConsumerStorage {
    public let database: PostgresDatabase

    /// - Throws: `StorageError` when the tables cannot be made.
    public init(database: PostgresDatabase) throws {
        try PostgresHookSchema.prepare(database)
        self.database = database
    }

    private static let columns = "namespace, name, paths, after, seen_at, auth_after"

    public func consumers(_ namespace: String?) throws -> [FunctionConsumer] {
        var sql = "SELECT \(Self.columns) FROM hearth_function_consumers"
        var parameters: [PostgresParameter] = []
        if let namespace {
            sql += " WHERE namespace = $1"
            parameters.append(.text(namespace))
        }
        return try database.query(sql + " ORDER BY namespace, name", parameters, doing: "reading the functions processes").compactMap(Self.consumer)
    }

    public func consumer(_ namespace: String, _ name: String) throws -> FunctionConsumer? {
        try database.query(
            "SELECT \(Self.columns) FROM hearth_function_consumers WHERE namespace = $1 AND name = $2", [.text(namespace), .text(name)],
            doing: "reading functions process '\(name)'"
        ).compactMap(Self.consumer).first
    }

    private static func consumer(_ row: PostgresRow) throws -> FunctionConsumer? {
        guard let namespace = try row.string(at: 0), let name = try row.string(at: 1), let paths = try row.string(at: 2),
            let after = try row.int64(at: 3), let seenAt = try row.int64(at: 4), let patterns = FunctionConsumer.patterns(pathsJSON: paths)
        else { return nil }
        return FunctionConsumer(namespace: namespace, name: name, patterns: patterns, after: after, seenAt: seenAt, authAfter: try row.int64(at: 5))
    }

    public func register(_ consumer: FunctionConsumer) throws {
        _ = try database.query(
            """
            INSERT INTO hearth_function_consumers (namespace, name, paths, after, seen_at) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (namespace, name) DO UPDATE SET paths = excluded.paths, seen_at = excluded.seen_at
            """,
            [.text(consumer.namespace), .text(consumer.name), .text(consumer.pathsJSON), .int8(consumer.after), .int8(consumer.seenAt)],
            doing: "registering functions process '\(consumer.name)'")
    }

    public func advance(_ namespace: String, _ name: String, to after: Int64?, authAfter: Int64?, at time: Int64) throws -> Bool {
        try !database.query(
            """
            UPDATE hearth_function_consumers SET after = greatest(after, coalesce($3, after)),
                auth_after = greatest(coalesce(auth_after, 0), coalesce($4, auth_after, 0)), seen_at = $5
            WHERE namespace = $1 AND name = $2 RETURNING 1
            """, [.text(namespace), .text(name), .int8(after), .int8(authAfter), .int8(time)], doing: "saving the cursor of functions process '\(name)'"
        ).isEmpty
    }

    public func remove(_ namespace: String, _ name: String) throws -> Bool {
        let results = try database.run(
            [PostgresStatement("DELETE FROM hearth_function_parked WHERE namespace = $1 AND consumer = $2", [.text(namespace), .text(name)]),
             PostgresStatement("DELETE FROM hearth_function_consumers WHERE namespace = $1 AND name = $2 RETURNING 1", [.text(namespace), .text(name)])],
            doing: "forgetting functions process '\(name)'")
        return !(results.last?.isEmpty ?? true)
    }

    public func park(_ event: ParkedEvent, _ namespace: String, _ consumer: String) throws {
        _ = try database.run(
            [PostgresStatement(
                """
                INSERT INTO hearth_function_parked (namespace, consumer, function, event_id, position, event, attempts, error, parked_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                ON CONFLICT (namespace, consumer, function, event_id) DO UPDATE SET attempts = hearth_function_parked.attempts + excluded.attempts,
                    error = excluded.error, parked_at = excluded.parked_at
                """,
                [.text(namespace), .text(consumer), .text(event.function), .text(event.eventId), .int8(event.position), .text(event.eventJSON),
                 .int8(Int64(event.attempts)), .text(event.error), .int8(event.parkedAt)]),
             PostgresStatement(
                """
                DELETE FROM hearth_function_parked WHERE namespace = $1 AND consumer = $2 AND (function, event_id) NOT IN
                    (SELECT function, event_id FROM hearth_function_parked WHERE namespace = $1 AND consumer = $2 ORDER BY parked_at DESC LIMIT $3)
                """, [.text(namespace), .text(consumer), .int8(Int64(ServerLimits.parkedFunctionEventsMax))])],
            doing: "parking an event of functions process '\(consumer)'")
    }

    public func parked(_ namespace: String, _ consumer: String) throws -> [ParkedEvent] {
        try database.query(
            """
            SELECT function, event_id, position, event, attempts, error, parked_at FROM hearth_function_parked
            WHERE namespace = $1 AND consumer = $2 ORDER BY position, function, event_id
            """, [.text(namespace), .text(consumer)], doing: "reading the parked events of '\(consumer)'"
        ).compactMap { row in
            guard let function = try row.string(at: 0), let eventId = try row.string(at: 1), let position = try row.int64(at: 2),
                let event = try row.string(at: 3), let attempts = try row.int64(at: 4), let error = try row.string(at: 5), let parkedAt = try row.int64(at: 6)
            else { return nil }
            return ParkedEvent(
                function: function, eventId: eventId, position: position, eventJSON: event, attempts: Int(clamping: attempts), error: error,
                parkedAt: parkedAt)
        }
    }

    public func parkedCount(_ namespace: String, _ consumer: String) throws -> Int {
        Int(clamping: try database.query(
            "SELECT count(*) FROM hearth_function_parked WHERE namespace = $1 AND consumer = $2", [.text(namespace), .text(consumer)],
            doing: "counting the parked events of '\(consumer)'"
        ).first?.int64(at: 0) ?? 0)
    }

    public func dismiss(_ namespace: String, _ consumer: String, eventId: String?) throws -> Int {
        var sql = "DELETE FROM hearth_function_parked WHERE namespace = $1 AND consumer = $2"
        var parameters: [PostgresParameter] = [.text(namespace), .text(consumer)]
        if let eventId {
            sql += " AND event_id = $3"
            parameters.append(.text(eventId))
        }
        return try database.query(sql + " RETURNING 1", parameters, doing: "dismissing parked events of '\(consumer)'").count
    }
}
