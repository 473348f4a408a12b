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

/// A row of a result, read in binary (every query asks for binary results).
struct PostgresRow {
    let result: PostgresResult
    let index: Int32

    init(result: PostgresResult, index: Int32) {
        self.result = result
        self.index = index
    }

    func isNull(_ column: Int32) -> Bool { PQgetisnull(result.handle, index, column) == 1 }

    /// The column's bytes, valid while the row's result lives; nil for NULL.
    func bytes(_ column: Int32) -> UnsafeBufferPointer<UInt8>? {
        guard column < PQnfields(result.handle), !isNull(column), let value = PQgetvalue(result.handle, index, column) else { return nil }
        let count = Int(PQgetlength(result.handle, index, column))
        return UnsafeBufferPointer(start: UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), count: count)
    }
}
