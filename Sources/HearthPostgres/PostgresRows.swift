/// The rows one statement returned, in order (none for a statement that returns no rows). They stay
/// readable after the connection that fetched them went back to its pool: libpq's result is a copy.
///
///     let rows = try database.query("SELECT uid FROM t ORDER BY uid", doing: "listing users")
///     let uids = try rows.map { try $0.string(at: 0) ?? "" }
public struct PostgresRows: RandomAccessCollection {
    private let result: PostgresResult?

    init(_ result: PostgresResult?) { self.result = result }

    public var startIndex: Int { 0 }
    public var endIndex: Int { result?.rowCount ?? 0 }

    public subscript(position: Int) -> PostgresRow {
        guard let result, let index = Int32(exactly: position), position >= 0, position < result.rowCount else {
            preconditionFailure("row \(position) of \(count)")
        }
        return PostgresRow(result: result, index: index)
    }
}
