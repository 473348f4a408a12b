import HearthStorage

extension StorageError {
    /// A PostgreSQL failure as an error an operator can act on: what Hearth was `doing`, the server
    /// (without its password), PostgreSQL's own message, and what to check.
    init(_ error: PostgresError, at endpoint: PostgresEndpoint, doing: String) {
        let reason = error.message
        switch error.kind {
        case .connect:
            self.init(.unavailable, "cannot connect to PostgreSQL at \(endpoint) while \(doing) (\(reason)). \(Self.connectAdvice(error.message))")
        case .connectionLost:
            self.init(.unavailable, "lost the connection to PostgreSQL at \(endpoint) while \(doing) (\(reason)). Check that PostgreSQL is running and reachable; hearth reconnects by itself.")
        case .timedOut:
            self.init(.unavailable, "PostgreSQL at \(endpoint) did not answer in time while \(doing). Check that it is running, not overloaded and reachable; hearth reconnects by itself.")
        case .server(let state):
            let (code, advice) = Self.classify(state)
            self.init(code, "PostgreSQL at \(endpoint) refused \(doing): \(reason) (SQLSTATE \(state)). \(advice)")
        }
    }

    /// What to check when no connection could be made, from libpq's message (its wording is stable
    /// across versions; the advice only adds to it).
    static func connectAdvice(_ message: String) -> String {
        let general = "Check that PostgreSQL is running there and that the host, port, user, password and database in the URL are right."
        if message.contains("Connection refused") || message.contains("No such file or directory") {
            return "Nothing accepts connections at that address: start PostgreSQL, or fix the host and port (and listen_addresses in postgresql.conf). " + general
        }
        if message.contains("authentication failed") || message.contains("password") {
            return "Check the user and password in the URL, and pg_hba.conf on the server."
        }
        if message.contains("does not exist") {
            return "Create the database or role (createdb, createuser), or fix the URL."
        }
        if message.contains("could not translate host name") {
            return "The host name does not resolve: fix the host in the URL or the DNS."
        }
        return general
    }

    /// A SQLSTATE's code and advice (https://www.postgresql.org/docs/current/errcodes-appendix.html).
    static func classify(_ state: String) -> (Code, String) {
        switch state {
        case "53100": return (.diskFull, "The disk of the PostgreSQL server is full: free space there.")
        case "25006": return (.readOnly, "This server is read-only (a standby, or default_transaction_read_only): point the URL at the primary.")
        case "42501": return (.readOnly, "The user in the URL lacks privileges on Hearth's tables (hearth_records, hearth_changes, hearth_schema): grant them.")
        case "23505": return (.busy, "Another writer committed to this namespace meanwhile (two hearth servers on one namespace, or a commit hearth gave up on that arrived late): run one server per namespace.")
        case "40001", "40P01", "55P03", "57014": return (.busy, "PostgreSQL was busy (a lock, a conflict or a timeout): retry.")
        case "54000": return (.invalidData, "One value PostgreSQL stores can hold at most 1 GB: split the write or the import.")
        case "XX001", "XX002": return (.corrupt, "PostgreSQL reports damaged data: check the server and restore from a backup.")
        default:
            if state.hasPrefix("08") || state.hasPrefix("57P") || state == "53300" {
                return (.unavailable, "Check that PostgreSQL is running and accepts connections; hearth reconnects by itself.")
            }
            if state.hasPrefix("42") {
                return (.corrupt, "Hearth's tables are not as this hearth expects (altered, or made by another version): check hearth_schema.")
            }
            return (.io, "PostgreSQL's log has the details.")
        }
    }
}
