internal import CLibPQ
public import HearthStorage

/// A row of a result, read in binary (every query asks for binary results). The typed accessors return
/// nil for SQL NULL and throw when the bytes are not the type asked for (a column of another type, or
/// data Hearth never writes): the bytes come from outside the process, so they are checked, never trusted.
///
///     for row in try database.query("SELECT uid, revoked FROM t WHERE hash = $1", [.bytea(hash)], doing: "reading a token") {
///         let uid = try row.string(at: 0), revoked = try row.boolean(at: 1)
///     }
public struct PostgresRow {
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

    /// The number of columns.
    public var columnCount: Int { Int(PQnfields(result.handle)) }

    /// A `text` (or `varchar`) column, validated as UTF-8.
    public func string(at column: Int) throws(StorageError) -> String? {
        try decoded(column, as: "text", PostgresBinary.decodeString)
    }

    /// A `bigint` column.
    public func int64(at column: Int) throws(StorageError) -> Int64? {
        try decoded(column, as: "bigint", PostgresBinary.decodeInt64)
    }

    /// An `integer` column.
    public func int32(at column: Int) throws(StorageError) -> Int32? {
        try decoded(column, as: "integer", PostgresBinary.decodeInt32)
    }

    /// A `boolean` column.
    public func boolean(at column: Int) throws(StorageError) -> Bool? {
        try decoded(column, as: "boolean", PostgresBinary.decodeBoolean)
    }

    /// A `bytea` column (any column's raw binary value).
    public func bytes(at column: Int) throws(StorageError) -> [UInt8]? {
        try decoded(column, as: "bytea") { Array($0) }
    }

    private func decoded<Value>(
        _ column: Int, as type: String, _ decode: (UnsafeBufferPointer<UInt8>) -> Value?
    ) throws(StorageError) -> Value? {
        guard let number = Int32(exactly: column), number >= 0, number < PQnfields(result.handle) else {
            throw StorageError(.corrupt, "a row from PostgreSQL has no column \(column) (it has \(columnCount)): the table is not as this hearth expects.")
        }
        guard let bytes = bytes(number) else { return nil }
        guard let value = decode(bytes) else {
            throw StorageError(.corrupt, "column \(column) of a row from PostgreSQL is not a valid \(type) (\(bytes.count) bytes): the table is not as this hearth expects.")
        }
        return value
    }
}
