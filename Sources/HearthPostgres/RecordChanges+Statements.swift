extension RecordChanges {
    /// The statements that apply these changes to `namespace`'s records, removals first (see
    /// ``RecordChanges``); nothing for an empty kind of change. Upserts go in statements of at most
    /// 10,000 records or 64 MB (`RecordColumns.isFull`).
    func statements(namespace: String) -> [PostgresStatement] {
        var statements: [PostgresStatement] = []
        if removedEverything { statements.append(PostgresSchema.deleteAllRecords(namespace: namespace)) }
        if !removedRecords.isEmpty {
            var paths = PostgresBinary.ArrayEncoder(of: .bytea)
            for path in removedRecords { paths.append(path) }
            statements.append(PostgresSchema.deleteRecords(namespace: namespace, paths: paths.finish()))
        }
        if !removedRanges.isEmpty {
            var lows = PostgresBinary.ArrayEncoder(of: .bytea)
            var highs = PostgresBinary.ArrayEncoder(of: .bytea)
            for range in removedRanges {
                lows.append(range.low)
                highs.append(range.high)
            }
            statements.append(PostgresSchema.deleteRanges(namespace: namespace, lows: lows.finish(), highs: highs.finish()))
        }
        var columns = RecordColumns()
        upserts.forEach { key, record in
            columns.append(path: key.bytes, record)
            if columns.isFull {
                statements.append(PostgresSchema.upsertRecords(namespace: namespace, columns: columns))
                columns = RecordColumns()
            }
            return true
        }
        if columns.count > 0 { statements.append(PostgresSchema.upsertRecords(namespace: namespace, columns: columns)) }
        return statements
    }
}
