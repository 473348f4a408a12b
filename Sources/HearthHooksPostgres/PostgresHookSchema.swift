import HearthPostgres

/// The tables of webhooks and functions processes in a cluster's PostgreSQL, beside the engine's and
/// auth's, prefixed `hearth_hook_` and `hearth_function_` like SQLite's `hooks.sqlite` tables
/// (docs/functions.md, "In a cluster"):
///
///     hearth_hook_documents(namespace, json, deployed_at)          each namespace's hooks document, secrets included
///     hearth_hook_cursors(namespace, hook, position, next_index)    where each hook is in the feed
///     hearth_hook_dead_letters(namespace, hook, event_id, …)        events whose attempts ran out
///     hearth_hook_deliveries(id, namespace, hook, …)                the delivery log, the newest 1,000 per hook
///     hearth_hook_owners(namespace, hook, node, expires_at)         which node delivers each hook: a lease
///     hearth_function_consumers(namespace, name, paths, after, …)   functions processes and their cursors
///     hearth_function_parked(namespace, consumer, function, …)      events their handlers gave up on
enum PostgresHookSchema {
    /// Key of the advisory lock held while the tables are created, so nodes starting at once do not race
    /// on `CREATE TABLE IF NOT EXISTS`. 'HrHk' as a number (the engine's is 'Hrth', auth's 'HrAu').
    static let creationLockKey: Int64 = 0x4872_486B

    static let create: [PostgresStatement] = [
        PostgresStatement("SELECT pg_advisory_xact_lock(\(creationLockKey))"),
        PostgresStatement("""
            CREATE TABLE IF NOT EXISTS hearth_hook_documents (
                namespace text COLLATE "C" PRIMARY KEY, json text NOT NULL, deployed_at bigint NOT NULL)
            """),
        PostgresStatement("""
            CREATE TABLE IF NOT EXISTS hearth_hook_cursors (
                namespace text COLLATE "C" NOT NULL, hook text COLLATE "C" NOT NULL, position bigint NOT NULL, next_index bigint NOT NULL,
                PRIMARY KEY (namespace, hook))
            """),
        PostgresStatement("""
            CREATE TABLE IF NOT EXISTS hearth_hook_dead_letters (
                namespace text COLLATE "C" NOT NULL, hook text COLLATE "C" NOT NULL, event_id text COLLATE "C" NOT NULL,
                position bigint NOT NULL, body bytea NOT NULL, attempts bigint NOT NULL, error text NOT NULL, parked_at bigint NOT NULL,
                redeliver boolean NOT NULL DEFAULT false, PRIMARY KEY (namespace, hook, event_id))
            """),
        PostgresStatement("""
            CREATE TABLE IF NOT EXISTS hearth_hook_deliveries (
                id bigserial PRIMARY KEY, namespace text COLLATE "C" NOT NULL, hook text COLLATE "C" NOT NULL, event_id text NOT NULL,
                attempt bigint NOT NULL, status bigint NOT NULL, latency_ms bigint NOT NULL, excerpt text NOT NULL, time bigint NOT NULL)
            """),
        PostgresStatement("CREATE INDEX IF NOT EXISTS hearth_hook_deliveries_by_hook ON hearth_hook_deliveries (namespace, hook, id)"),
        PostgresStatement("""
            CREATE TABLE IF NOT EXISTS hearth_hook_owners (
                namespace text COLLATE "C" NOT NULL, hook text COLLATE "C" NOT NULL, node text NOT NULL, expires_at timestamptz NOT NULL,
                PRIMARY KEY (namespace, hook))
            """),
        PostgresStatement("""
            CREATE TABLE IF NOT EXISTS hearth_function_consumers (
                namespace text COLLATE "C" NOT NULL, name text COLLATE "C" NOT NULL, paths text NOT NULL, after bigint NOT NULL,
                seen_at bigint NOT NULL, auth_after bigint, PRIMARY KEY (namespace, name))
            """),
        PostgresStatement("""
            CREATE TABLE IF NOT EXISTS hearth_function_parked (
                namespace text COLLATE "C" NOT NULL, consumer text COLLATE "C" NOT NULL, function text COLLATE "C" NOT NULL,
                event_id text COLLATE "C" NOT NULL, position bigint NOT NULL, event text NOT NULL, attempts bigint NOT NULL,
                error text NOT NULL, parked_at bigint NOT NULL, PRIMARY KEY (namespace, consumer, function, event_id))
            """),
    ]

    static func prepare(_ database: PostgresDatabase) throws {
        _ = try database.run(create, doing: "creating the webhooks' tables")
    }
}
