import HearthPostgres
import HearthStorage

/// The tables of HearthAuthPostgres, beside the engine's `hearth_records` in the same database and
/// prefixed `hearth_auth_` like SQLite's `auth_` (docs/auth.md, "With PostgreSQL"):
///
///     hearth_auth_users(uid, email, phone, record)          one row per account; record is UserRecord's JSON
///     hearth_auth_user_providers(provider_id, raw_id, uid)   linked identities, unique
///     hearth_auth_refresh_tokens(hash, uid, …, revoked)      SHA-256 of each refresh token
///     hearth_auth_oob_codes(code_hash, outbox_code, …)       SHA-256 of each out-of-band code
///     hearth_auth_signing_key(id = 1, pem)                   the key every node signs with
///     hearth_auth_settings(name, value)                      sign-in methods
///     hearth_auth_schema(version)                            the layout version
///
/// The unique constraints are named, because the store tells conflicts apart by name: the same
/// conflicts as SQLite's (id, email, phone number, linked identity) throw the same `AccountStoreConflict`.
/// `uid` compares bytewise (`COLLATE "C"`), so pages of users come in SQLite's order whatever the
/// database's collation. A trigger notifies `hearth_auth_users` with the uid of every changed or deleted
/// account, in the changing transaction, so every node's cache of accounts forgets it once it commits,
/// whoever changed it (another node, `hearth users`, psql).
enum PostgresAuthSchema {
    /// Layout version in `hearth_auth_schema`; bumped with a migration when the layout changes.
    static let version: Int32 = 1

    /// Key of the advisory lock held while the tables are created, so nodes starting at once do not
    /// race on `CREATE TABLE IF NOT EXISTS`. 'HrAu' as a number (the engine's is 'Hrth').
    static let creationLockKey: Int64 = 0x4872_4175

    /// The channel the trigger notifies; the payload is the account's uid.
    static let userChangesChannel = "hearth_auth_users"

    enum Constraint {
        static let userID = "hearth_auth_users_pkey"
        static let email = "hearth_auth_users_email_key"
        static let phoneNumber = "hearth_auth_users_phone_key"
        static let provider = "hearth_auth_user_providers_pkey"
    }

    static let create: [PostgresStatement] = [
        PostgresStatement("SELECT pg_advisory_xact_lock(\(creationLockKey))"),
        PostgresStatement("""
            CREATE TABLE IF NOT EXISTS hearth_auth_users (
                uid text COLLATE "C" NOT NULL,
                email text,
                phone text,
                record text NOT NULL,
                CONSTRAINT \(Constraint.userID) PRIMARY KEY (uid),
                CONSTRAINT \(Constraint.email) UNIQUE (email),
                CONSTRAINT \(Constraint.phoneNumber) UNIQUE (phone)
            )
            """),
        PostgresStatement("""
            CREATE TABLE IF NOT EXISTS hearth_auth_user_providers (
                provider_id text NOT NULL,
                raw_id text NOT NULL,
                uid text COLLATE "C" NOT NULL,
                CONSTRAINT \(Constraint.provider) PRIMARY KEY (provider_id, raw_id)
            )
            """),
        PostgresStatement("CREATE INDEX IF NOT EXISTS hearth_auth_user_providers_uid ON hearth_auth_user_providers (uid)"),
        PostgresStatement("""
            CREATE TABLE IF NOT EXISTS hearth_auth_refresh_tokens (
                hash bytea PRIMARY KEY,
                uid text COLLATE "C" NOT NULL,
                provider text NOT NULL,
                auth_time bigint NOT NULL,
                extra_claims text,
                issued_at bigint NOT NULL,
                revoked boolean NOT NULL DEFAULT false
            )
            """),
        PostgresStatement("CREATE INDEX IF NOT EXISTS hearth_auth_refresh_tokens_uid ON hearth_auth_refresh_tokens (uid)"),
        PostgresStatement("""
            CREATE TABLE IF NOT EXISTS hearth_auth_oob_codes (
                code_hash bytea PRIMARY KEY,
                outbox_code text,
                continue_url text,
                request_type text NOT NULL,
                uid text COLLATE "C" NOT NULL,
                email text NOT NULL,
                new_email text,
                created_at bigint NOT NULL,
                expires_at bigint NOT NULL
            )
            """),
        PostgresStatement("CREATE INDEX IF NOT EXISTS hearth_auth_oob_codes_uid ON hearth_auth_oob_codes (uid)"),
        PostgresStatement("""
            CREATE TABLE IF NOT EXISTS hearth_auth_signing_key (
                id integer PRIMARY KEY CHECK (id = 1),
                pem text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now()
            )
            """),
        PostgresStatement("CREATE TABLE IF NOT EXISTS hearth_auth_settings (name text PRIMARY KEY, value text NOT NULL)"),
        // Inserts need no notification: a cache never holds an account that does not exist.
        PostgresStatement("""
            CREATE OR REPLACE FUNCTION hearth_auth_user_changed() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_notify('\(userChangesChannel)', OLD.uid);
                RETURN NULL;
            END
            $$
            """),
        PostgresStatement("DROP TRIGGER IF EXISTS hearth_auth_users_changed ON hearth_auth_users"),
        PostgresStatement("""
            CREATE TRIGGER hearth_auth_users_changed AFTER UPDATE OR DELETE ON hearth_auth_users
            FOR EACH ROW EXECUTE FUNCTION hearth_auth_user_changed()
            """),
        PostgresStatement("CREATE TABLE IF NOT EXISTS hearth_auth_schema (version integer NOT NULL)"),
        PostgresStatement("INSERT INTO hearth_auth_schema (version) SELECT \(version) WHERE NOT EXISTS (SELECT 1 FROM hearth_auth_schema)"),
    ]

    /// Creates the tables when they are missing (skipped when they exist, so a role without CREATE
    /// rights can use tables an administrator made) and checks their version.
    ///
    /// - Throws: ``StorageError``: `.corrupt` for tables of a newer Hearth, or what reaching PostgreSQL threw.
    static func prepare(_ database: PostgresDatabase) throws {
        let exists = try database.query("SELECT to_regclass('hearth_auth_schema') IS NOT NULL", doing: "checking the auth tables")
        if try exists.first?.boolean(at: 0) != true {
            _ = try database.run(create, doing: "creating the auth tables")
        }
        let found = try database.query("SELECT max(version) FROM hearth_auth_schema", doing: "checking the auth tables")
        guard let stored = try found.first?.int32(at: 0) else {
            throw StorageError(.corrupt, "the auth tables at \(database.location) have no layout version (hearth_auth_schema is empty or altered). Check hearth_auth_schema.")
        }
        if stored > version {
            throw StorageError(.corrupt, "the auth tables at \(database.location) were made by a newer Hearth (layout \(stored); this build reads up to \(version)). Upgrade hearth.")
        }
    }
}
