import HearthCore
public import HearthHooks
public import HearthPostgres
import HearthProtocol
import HearthStorage
public import HearthTriggers

/// ``HookStorage`` for a cluster: every node's hooks documents, cursors, dead letters and log in the
/// shared PostgreSQL (``PostgresHookSchema``), and one node at a time delivering each hook: the node
/// whose row in `hearth_hook_owners` has not expired. Each node renews the hooks it holds every
/// second or so (``claim(_:_:)``); a node that stops lets them go, a node that dies loses them when its
/// lease lapses, and a cursor is saved only by the node holding its hook, so a node that stalled and
/// woke up after losing a hook cannot move that hook's cursor back.
public final class PostgresHookStore: HookStorage {
    public let database: PostgresDatabase
    /// This process in `hearth_hook_owners`: the node's name and a random suffix (a restarted node is
    /// another holder).
    public let node: String
    let leaseMilliseconds: Int64

    /// - Throws: `StorageError` when the tables cannot be made.
    public init(database: PostgresDatabase, node: String, leaseSeconds: Int) throws {
        try PostgresHookSchema.prepare(database)
        self.database = database
        self.node = node
        leaseMilliseconds = Int64(leaseSeconds) * 1000
    }

    public var isShared: Bool { true }

    public func close() { database.close() }

    // MARK: Documents

    public func documents() throws -> [(namespace: String, document: HooksDocument)] {
        try database.query("SELECT namespace, json FROM hearth_hook_documents ORDER BY namespace", doing: "reading the hooks documents").compactMap { row in
            guard let namespace = try row.string(at: 0), let json = try row.string(at: 1) else { return nil }
            return (namespace, try HooksDocument(json: Array(json.utf8)))
        }
    }

    public func document(_ namespace: String) throws -> HooksDocument? {
        guard let json = try database.query(
            "SELECT json FROM hearth_hook_documents WHERE namespace = $1", [.text(namespace)], doing: "reading the hooks of '\(namespace)'"
        ).first?.string(at: 0) else { return nil }
        return try HooksDocument(json: Array(json.utf8))
    }

    public func save(_ document: HooksDocument, for namespace: String, at time: Int64) throws {
        // The hooks' names as a JSON array: what each table keeps of this namespace.
        let names = "[" + document.hooks.map { Node($0.name).json() }.joined(separator: ",") + "]"
        var statements = [PostgresStatement(
            """
            INSERT INTO hearth_hook_documents (namespace, json, deployed_at) VALUES ($1, $2, $3)
            ON CONFLICT (namespace) DO UPDATE SET json = excluded.json, deployed_at = excluded.deployed_at
            """, [.text(namespace), .text(document.json(revealingSecrets: true)), .int8(time)])]
        for table in ["hearth_hook_cursors", "hearth_hook_dead_letters", "hearth_hook_deliveries", "hearth_hook_owners"] {
            statements.append(PostgresStatement(
                "DELETE FROM \(table) WHERE namespace = $1 AND hook NOT IN (SELECT json_array_elements_text($2::json))",
                [.text(namespace), .text(names)]))
        }
        _ = try database.run(statements, doing: "saving the hooks of '\(namespace)'")
    }

    // MARK: Cursors

    public func cursor(_ namespace: String, _ hook: String) throws -> HookCursor? {
        guard let row = try database.query(
            "SELECT position, next_index FROM hearth_hook_cursors WHERE namespace = $1 AND hook = $2", [.text(namespace), .text(hook)],
            doing: "reading the cursor of hook '\(hook)'"
        ).first, let position = try row.int64(at: 0), let next = try row.int64(at: 1) else { return nil }
        return HookCursor(position: position, nextIndex: Int(clamping: next))
    }

    public func saveCursor(_ cursor: HookCursor, _ namespace: String, _ hook: String) throws {
        _ = try database.run([saveCursorStatement(cursor, namespace, hook)], doing: "saving the cursor of hook '\(hook)'")
    }

    /// The cursor's upsert, made only while this node holds the hook.
    private func saveCursorStatement(_ cursor: HookCursor, _ namespace: String, _ hook: String) -> PostgresStatement {
        PostgresStatement(
            """
            INSERT INTO hearth_hook_cursors (namespace, hook, position, next_index)
            SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM hearth_hook_owners WHERE namespace = $1 AND hook = $2 AND node = $5)
            ON CONFLICT (namespace, hook) DO UPDATE SET position = excluded.position, next_index = excluded.next_index
            """, [.text(namespace), .text(hook), .int8(cursor.position), .int8(Int64(cursor.nextIndex)), .text(node)])
    }

    // MARK: Dead letters

    public func park(_ letter: DeadLetter, cursor: HookCursor?, _ namespace: String, _ hook: String) throws {
        var statements = [PostgresStatement(
            """
            INSERT INTO hearth_hook_dead_letters (namespace, hook, event_id, position, body, attempts, error, parked_at, redeliver)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, false)
            ON CONFLICT (namespace, hook, event_id) DO UPDATE SET attempts = hearth_hook_dead_letters.attempts + excluded.attempts,
                error = excluded.error, parked_at = excluded.parked_at, redeliver = false
            """,
            [.text(namespace), .text(hook), .text(letter.eventId), .int8(letter.position), .bytea(letter.body), .int8(Int64(letter.attempts)),
             .text(letter.error), .int8(letter.parkedAt)])]
        if let cursor { statements.append(saveCursorStatement(cursor, namespace, hook)) }
        _ = try database.run(statements, doing: "parking an event of hook '\(hook)'")
    }

    private static let deadLetterColumns = "hook, event_id, position, body, attempts, error, parked_at, redeliver"

    public func deadLetters(_ namespace: String, hook: String?) throws -> [DeadLetter] {
        var sql = "SELECT \(Self.deadLetterColumns) FROM hearth_hook_dead_letters WHERE namespace = $1"
        var parameters: [PostgresParameter] = [.text(namespace)]
        if let hook {
            sql += " AND hook = $2"
            parameters.append(.text(hook))
        }
        return try database.query(sql + " ORDER BY position, event_id", parameters, doing: "reading the dead letters of '\(namespace)'")
            .compactMap(Self.deadLetter)
    }

    public func markForRedelivery(_ namespace: String, _ hook: String, eventId: String?) throws -> Int {
        var sql = "UPDATE hearth_hook_dead_letters SET redeliver = true WHERE namespace = $1 AND hook = $2"
        var parameters: [PostgresParameter] = [.text(namespace), .text(hook)]
        if let eventId {
            sql += " AND event_id = $3"
            parameters.append(.text(eventId))
        }
        return try database.query(sql + " RETURNING 1", parameters, doing: "marking dead letters of hook '\(hook)'").count
    }

    public func redeliveries(_ namespace: String, _ hook: String) throws -> [DeadLetter] {
        try database.query(
            "SELECT \(Self.deadLetterColumns) FROM hearth_hook_dead_letters WHERE namespace = $1 AND hook = $2 AND redeliver ORDER BY position, event_id",
            [.text(namespace), .text(hook)], doing: "reading the redeliveries of hook '\(hook)'"
        ).compactMap(Self.deadLetter)
    }

    public func removeDeadLetter(_ namespace: String, _ hook: String, eventId: String) throws {
        _ = try database.query(
            "DELETE FROM hearth_hook_dead_letters WHERE namespace = $1 AND hook = $2 AND event_id = $3", [.text(namespace), .text(hook), .text(eventId)],
            doing: "removing a dead letter of hook '\(hook)'")
    }

    private static func deadLetter(_ row: PostgresRow) throws -> DeadLetter? {
        guard let hook = try row.string(at: 0), let eventId = try row.string(at: 1), let position = try row.int64(at: 2), let body = try row.bytes(at: 3),
            let attempts = try row.int64(at: 4), let error = try row.string(at: 5), let parkedAt = try row.int64(at: 6), let redeliver = try row.boolean(at: 7)
        else { return nil }
        return DeadLetter(
            hook: hook, eventId: eventId, position: position, body: body, attempts: Int(clamping: attempts), error: error, parkedAt: parkedAt,
            redeliver: redeliver)
    }

    // MARK: The delivery log

    public func log(_ attempt: DeliveryAttempt, _ namespace: String, _ hook: String) throws {
        let inserted = try database.query(
            """
            INSERT INTO hearth_hook_deliveries (namespace, hook, event_id, attempt, status, latency_ms, excerpt, time)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id
            """,
            [.text(namespace), .text(hook), .text(attempt.eventId), .int8(Int64(attempt.attempt)), .int8(Int64(attempt.status)),
             .int8(attempt.latencyMilliseconds), .text(attempt.excerpt), .int8(attempt.time)], doing: "logging a delivery of hook '\(hook)'")
        // Trimmed now and then rather than on every row.
        guard let id = try inserted.first?.int64(at: 0), id % 100 == 0 else { return }
        _ = try database.query(
            """
            DELETE FROM hearth_hook_deliveries WHERE namespace = $1 AND hook = $2 AND id <= (SELECT id FROM hearth_hook_deliveries
                WHERE namespace = $1 AND hook = $2 ORDER BY id DESC LIMIT 1 OFFSET $3)
            """, [.text(namespace), .text(hook), .int8(Int64(ServerLimits.hookLogRowsMax))], doing: "trimming the delivery log of hook '\(hook)'")
    }

    public func deliveries(_ namespace: String, hook: String?, limit: Int) throws -> [(hook: String, attempt: DeliveryAttempt)] {
        var sql = "SELECT hook, event_id, attempt, status, latency_ms, excerpt, time FROM hearth_hook_deliveries WHERE namespace = $1"
        var parameters: [PostgresParameter] = [.text(namespace)]
        if let hook {
            sql += " AND hook = $2"
            parameters.append(.text(hook))
        }
        parameters.append(.int8(Int64(limit)))
        return try database.query(sql + " ORDER BY id DESC LIMIT $\(parameters.count)", parameters, doing: "reading the delivery log of '\(namespace)'")
            .compactMap { row in
                guard let hook = try row.string(at: 0), let eventId = try row.string(at: 1), let attempt = try row.int64(at: 2),
                    let status = try row.int64(at: 3), let latency = try row.int64(at: 4), let excerpt = try row.string(at: 5), let time = try row.int64(at: 6)
                else { return nil }
                return (hook, DeliveryAttempt(
                    eventId: eventId, attempt: Int(clamping: attempt), status: Int(clamping: status), latencyMilliseconds: latency, excerpt: excerpt,
                    time: time))
            }
    }

    public func counts(_ namespace: String, _ hook: String) throws -> (delivered: Int, failed: Int, dead: Int) {
        let row = try database.query(
            """
            SELECT (SELECT count(*) FROM hearth_hook_deliveries WHERE namespace = $1 AND hook = $2 AND status BETWEEN 200 AND 299),
                   (SELECT count(*) FROM hearth_hook_deliveries WHERE namespace = $1 AND hook = $2 AND status NOT BETWEEN 200 AND 299),
                   (SELECT count(*) FROM hearth_hook_dead_letters WHERE namespace = $1 AND hook = $2)
            """, [.text(namespace), .text(hook)], doing: "counting the deliveries of hook '\(hook)'")
        guard let first = row.first else { return (0, 0, 0) }
        return (Int(clamping: try first.int64(at: 0) ?? 0), Int(clamping: try first.int64(at: 1) ?? 0), Int(clamping: try first.int64(at: 2) ?? 0))
    }

    // MARK: Which node delivers each hook

    public func claim(_ namespace: String, _ hook: String) throws -> Bool {
        try !database.query(
            """
            INSERT INTO hearth_hook_owners (namespace, hook, node, expires_at) VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
            ON CONFLICT (namespace, hook) DO UPDATE SET node = excluded.node, expires_at = excluded.expires_at
                WHERE hearth_hook_owners.node = excluded.node OR hearth_hook_owners.expires_at < now()
            RETURNING 1
            """, [.text(namespace), .text(hook), .text(node), .int8(leaseMilliseconds)], doing: "holding hook '\(hook)' of '\(namespace)'"
        ).isEmpty
    }

    public func release(_ namespace: String, _ hook: String) {
        _ = try? database.query(
            "DELETE FROM hearth_hook_owners WHERE namespace = $1 AND hook = $2 AND node = $3", [.text(namespace), .text(hook), .text(node)],
            doing: "letting hook '\(hook)' of '\(namespace)' go")
    }

    public func owner(_ namespace: String, _ hook: String) throws -> String? {
        try database.query(
            "SELECT node FROM hearth_hook_owners WHERE namespace = $1 AND hook = $2 AND expires_at > now()", [.text(namespace), .text(hook)],
            doing: "reading who delivers hook '\(hook)'"
        ).first?.string(at: 0)
    }
}
