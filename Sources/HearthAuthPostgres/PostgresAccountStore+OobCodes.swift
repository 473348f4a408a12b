public import HearthAuth
import HearthCrypto
import HearthPostgres

/// Out-of-band codes are found by the SHA-256 of the code, as in SQLite: a copy of the database hands
/// out no password resets. The code itself is kept only while the outbox is how codes reach people.
extension PostgresAccountStore {
    public func insertOobCode(_ code: OobCode) throws {
        _ = try database.query(
            """
            INSERT INTO hearth_auth_oob_codes
                (code_hash, outbox_code, request_type, uid, email, new_email, created_at, expires_at, continue_url)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            """,
            [.bytea(SHA256.hash(code.code)), .text(code.outboxShowsCode ? code.code : nil), .text(code.requestType),
             .text(code.uid), .text(code.email), .text(code.newEmail), .int8(code.createdAt), .int8(code.expiresAt),
             .text(code.continueUrl)],
            doing: "storing an out-of-band code")
    }

    public func oobCode(_ code: String) throws -> OobCode? {
        guard var found = try oobCodes(where: "WHERE code_hash = $1", [.bytea(SHA256.hash(code))]).first else { return nil }
        found.code = code
        return found
    }

    public func deleteOobCode(_ code: String) throws {
        _ = try database.query(
            "DELETE FROM hearth_auth_oob_codes WHERE code_hash = $1", [.bytea(SHA256.hash(code))], doing: "deleting an out-of-band code")
    }

    public func oobCodes() throws -> [OobCode] { try oobCodes(where: "", []) }

    private func oobCodes(where clause: String, _ parameters: [PostgresParameter]) throws -> [OobCode] {
        let rows = try database.query(
            """
            SELECT outbox_code, request_type, uid, email, new_email, created_at, expires_at, continue_url
            FROM hearth_auth_oob_codes \(clause) ORDER BY created_at, code_hash
            """,
            parameters, doing: "reading out-of-band codes")
        return try rows.map { row in
            let shown = try row.string(at: 0)
            return OobCode(
                code: shown ?? "", requestType: try row.string(at: 1) ?? "", uid: try row.string(at: 2) ?? "",
                email: try row.string(at: 3) ?? "", newEmail: try row.string(at: 4), createdAt: try row.int64(at: 5) ?? 0,
                expiresAt: try row.int64(at: 6) ?? 0, outboxShowsCode: shown != nil, continueUrl: try row.string(at: 7))
        }
    }
}
