public import HearthAuth
public import HearthPostgres
import HearthStorage

extension SigningKey {
    /// The key every node of a cluster signs with, kept in `hearth_auth_signing_key` (one row): read when
    /// there is one, else made, offered and read back. Offering is `INSERT … ON CONFLICT DO NOTHING`, and
    /// the read that follows returns whichever key was stored first, so nodes starting at once all end
    /// with the same key (the others' fresh keys are dropped unused).
    ///
    /// - Throws: `StorageError` when PostgreSQL cannot be reached; `CryptoError` for a stored key that is
    ///   not an RSA key in PEM (restore the row, or delete it to make a new key, which signs every user out
    ///   of the database until their next token refresh).
    public static func loadOrCreate(in database: PostgresDatabase) throws -> SigningKey {
        try PostgresAuthSchema.prepare(database)
        let select = PostgresStatement("SELECT pem FROM hearth_auth_signing_key WHERE id = 1")
        if let pem = try database.run([select], doing: "reading the signing key")[0].first?.string(at: 0) {
            return try SigningKey(pem: pem)
        }
        let offered = try generate()
        let results = try database.run(
            [
                PostgresStatement(
                    "INSERT INTO hearth_auth_signing_key (id, pem) VALUES (1, $1) ON CONFLICT (id) DO NOTHING",
                    [.text(try offered.pemRepresentation())]),
                select,
            ],
            doing: "storing the signing key")
        guard let pem = try results[1].first?.string(at: 0) else {
            throw StorageError(.corrupt, "the signing key stored at \(database.location) could not be read back (hearth_auth_signing_key is empty). Check the table.")
        }
        return try SigningKey(pem: pem)
    }
}
