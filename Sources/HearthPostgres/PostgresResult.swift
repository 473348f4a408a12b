internal import CLibPQ

/// One result of libpq, freed with it (PQclear).
final class PostgresResult {
    let handle: OpaquePointer
    init(handle: OpaquePointer) { self.handle = handle }
    deinit { PQclear(handle) }

    var rowCount: Int { Int(PQntuples(handle)) }

    /// The first column of the first row, or nil when there is none or it is NULL.
    var firstValue: PostgresRow? { rowCount > 0 ? PostgresRow(result: self, index: 0) : nil }
}
