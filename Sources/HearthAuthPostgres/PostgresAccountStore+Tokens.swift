public import HearthAuth
import HearthPostgres

extension PostgresAccountStore {
    public func insertRefreshToken(_ token: RefreshTokenRecord) throws {
        _ = try database.query(
            """
            INSERT INTO hearth_auth_refresh_tokens (hash, uid, provider, auth_time, extra_claims, issued_at, revoked)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            """,
            [.bytea(token.tokenHash), .text(token.uid), .text(token.provider), .int8(token.authTime), .text(token.extraClaims),
             .int8(token.issuedAt), .boolean(token.revoked)],
            doing: "storing a refresh token")
    }

    public func refreshToken(hash: [UInt8]) throws -> RefreshTokenRecord? {
        let rows = try database.query(
            "SELECT uid, provider, auth_time, extra_claims, issued_at, revoked FROM hearth_auth_refresh_tokens WHERE hash = $1",
            [.bytea(hash)], doing: "reading a refresh token")
        guard let row = rows.first else { return nil }
        return RefreshTokenRecord(
            tokenHash: hash, uid: try row.string(at: 0) ?? "", provider: try row.string(at: 1) ?? "",
            authTime: try row.int64(at: 2) ?? 0, extraClaims: try row.string(at: 3), issuedAt: try row.int64(at: 4) ?? 0,
            revoked: try row.boolean(at: 5) ?? false)
    }

    public func revokeRefreshTokens(uid: String) throws {
        _ = try database.query(
            "UPDATE hearth_auth_refresh_tokens SET revoked = true WHERE uid = $1 AND NOT revoked", [.text(uid)],
            doing: "revoking refresh tokens")
    }

    public func pruneRevokedRefreshTokens(issuedBefore: Int64) throws {
        _ = try database.query(
            "DELETE FROM hearth_auth_refresh_tokens WHERE revoked AND issued_at < $1", [.int8(issuedBefore)],
            doing: "pruning revoked refresh tokens")
    }
}
