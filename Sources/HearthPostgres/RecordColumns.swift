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
    /// Bytes of the paths and strings so far (numbers and the arrays' framing are not counted).
    private(set) var byteCount = 0

    /// Most records one `INSERT` carries: an import reports progress between statements.
    static let recordsPerStatementMax = 10_000
    /// Most bytes of paths and strings one `INSERT` carries: far below PostgreSQL's 1 GB for one value
    /// (each array is one parameter), even when every string is Firebase's largest (10 MB).
    static let bytesPerStatementMax = 64 << 20

    /// True when the next record should go into a new statement.
    var isFull: Bool { count >= Self.recordsPerStatementMax || byteCount >= Self.bytesPerStatementMax }

    mutating func append(path: [UInt8], _ record: StoredRecord) {
        paths.append(path)
        byteCount += path.count
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
        if let string {
            strings.append(string.utf8)
            byteCount += string.utf8.count
        } else {
            strings.appendNull()
        }
        switch record.priority {
        case .number(let value)?:
            priorityNumbers.append(value)
            priorityStrings.appendNull()
        case .string(let value)?:
            priorityNumbers.appendNull()
            priorityStrings.append(value.utf8)
            byteCount += value.utf8.count
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
