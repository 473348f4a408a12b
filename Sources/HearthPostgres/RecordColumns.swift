import HearthCore

/// Records as one binary array per column of `hearth_records`, for `unnest` in one `INSERT`: a commit
/// or an import writes thousands of records with one statement instead of one each.
struct RecordColumns {
    private var paths = PostgresBinary.ArrayEncoder(of: .bytea)
    private var booleans = PostgresBinary.ArrayEncoder(of: .boolean)
    private var integers = PostgresBinary.ArrayEncoder(of: .int8)
    private var doubles = PostgresBinary.ArrayEncoder(of: .float8)
    private var strings = PostgresBinary.ArrayEncoder(of: .bytea)
    private var priorityNumbers = PostgresBinary.ArrayEncoder(of: .float8)
    private var priorityStrings = PostgresBinary.ArrayEncoder(of: .bytea)
    private(set) var count = 0

    /// Most records one `INSERT` carries: its arrays stay a few MB, and an import reports progress
    /// between statements.
    static let recordsPerStatementMax = 10_000

    mutating func append(path: [UInt8], _ record: StoredRecord) {
        paths.append(path)
        var boolean: Bool?, integer: Int64?, double: Double?, string: String?
        switch record.leaf {
        case .bool(let value)?: boolean = value
        case .integer(let value)?: integer = value
        case .double(let value)?: double = value
        case .string(let value)?: string = value
        case nil: break
        }
        if let boolean { booleans.append(boolean) } else { booleans.appendNull() }
        if let integer { integers.append(integer) } else { integers.appendNull() }
        if let double { doubles.append(double) } else { doubles.appendNull() }
        if let string { strings.append(string.utf8) } else { strings.appendNull() }
        switch record.priority {
        case .number(let value)?:
            priorityNumbers.append(value)
            priorityStrings.appendNull()
        case .string(let value)?:
            priorityNumbers.appendNull()
            priorityStrings.append(value.utf8)
        case nil:
            priorityNumbers.appendNull()
            priorityStrings.appendNull()
        }
        count += 1
    }

    /// The seven arrays, in the order `PostgresSchema.upsertRecords` binds them ($2…$8).
    consuming func parameters() -> [PostgresParameter] {
        [
            .array(.byteaArray, paths.finish()), .array(.booleanArray, booleans.finish()), .array(.int8Array, integers.finish()),
            .array(.float8Array, doubles.finish()), .array(.byteaArray, strings.finish()),
            .array(.float8Array, priorityNumbers.finish()), .array(.byteaArray, priorityStrings.finish()),
        ]
    }
}
