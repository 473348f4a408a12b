import HearthCore
@testable import HearthPostgres
import HearthStorage
import Testing

@Test func binaryNumbersRoundTripAndWrongLengthsAreRejected() {
    for value: Int64 in [0, 1, -1, .max, .min, 1 << 53] {
        let bytes = PostgresBinary.int64(value)
        #expect(bytes.withUnsafeBufferPointer { PostgresBinary.decodeInt64($0) } == value)
    }
    for value in [0.0, -2.5, 1e300, .infinity] {
        #expect(PostgresBinary.double(value).withUnsafeBufferPointer { PostgresBinary.decodeDouble($0) } == value)
    }
    #expect([UInt8](repeating: 0, count: 7).withUnsafeBufferPointer { PostgresBinary.decodeInt64($0) } == nil)
    #expect([UInt8](repeating: 0, count: 9).withUnsafeBufferPointer { PostgresBinary.decodeDouble($0) } == nil)
    #expect([UInt8]([2]).withUnsafeBufferPointer { PostgresBinary.decodeBoolean($0) } == nil)
    #expect([UInt8]([0xFF, 0xFE]).withUnsafeBufferPointer { PostgresBinary.decodeString($0) } == nil)
    #expect(Array("héllo\u{0}".utf8).withUnsafeBufferPointer { PostgresBinary.decodeString($0) } == "héllo\u{0}")
}

@Test func arraysAreEncodedAsArraySendWritesThem() {
    var array = PostgresBinary.ArrayEncoder(of: .int8)
    array.append(Int64(7))
    array.appendNull()
    let bytes = array.finish()
    let header: [UInt8] = [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 20, 0, 0, 0, 2, 0, 0, 0, 1]
    #expect(Array(bytes.prefix(20)) == header)  // 1 dimension, has nulls, int8, 2 elements from 1
    #expect(Array(bytes.dropFirst(20)) == [0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 7, 0xFF, 0xFF, 0xFF, 0xFF])
    #expect(PostgresBinary.ArrayEncoder(of: .bytea).finish() == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 17])
}

@Test func aCommitInDoubtIsJudgedByTheSequenceFound() {
    #expect(SequenceCheck(known: 41, found: 42, inDoubt: 42) == .landed)
    #expect(SequenceCheck(known: 41, found: 41, inDoubt: 42) == .notLanded)
    #expect(SequenceCheck(known: 41, found: 45, inDoubt: 42) == .movedOn)
    #expect(SequenceCheck(known: 41, found: 0, inDoubt: 42) == .movedOn)
    #expect(SequenceCheck(known: 41, found: 41, inDoubt: nil) == .unchanged)
    #expect(SequenceCheck(known: 41, found: 43, inDoubt: nil) == .movedOn)
}

@Test func urlsAreShownWithoutTheirPassword() throws {
    let endpoint = try PostgresEndpoint(url: "postgresql://hearth:s3cret@db.example:6543/app?sslmode=disable")
    #expect(endpoint.description == "postgresql://hearth@db.example:6543/app")
    #expect(try PostgresEndpoint(url: "postgres://localhost/app").description == "postgresql://localhost/app")
    #expect(try PostgresEndpoint(url: "postgresql://u@/app?host=/run/postgresql").description == "postgresql://u@/run/postgresql/app")
}

@Test func badURLsAreRefusedWithoutRepeatingThem() {
    // libpq quotes what it cannot read in its parse errors: the whole URL, or a password part it cannot decode.
    let urls = [
        "host=db password=s3cret", "mysql://u:s3cret@db/app", "postgresql://u:s3cret@db/app?nonsense=1",
        "postgresql://u:s3cret%zz@db/app", "postgresql://u:s3cret@[db/app",
    ]
    for url in urls {
        #expect {
            _ = try PostgresEndpoint(url: url)
        } throws: { error in
            guard let error = error as? StorageError else { return false }
            return error.code == .invalidData && !error.message.contains("s3cret") && error.message.contains("postgresql://user:password@host:port/dbname")
        }
    }
}

@Test func sqlStatesMapToWhatTheOperatorDoes() {
    #expect(StorageError.classify("53100").0 == .diskFull)
    #expect(StorageError.classify("25006").0 == .readOnly)
    #expect(StorageError.classify("23505").0 == .busy)
    #expect(StorageError.classify("57P01").0 == .unavailable)
    #expect(StorageError.classify("08006").0 == .unavailable)
    #expect(StorageError.classify("XX001").0 == .corrupt)
    #expect(StorageError.classify("22012").0 == .io)
}

@Test func recordColumnsStartANewStatementByCountOrBytes() {
    var columns = RecordColumns()
    columns.append(path: Array("a\u{1}".utf8), StoredRecord(leaf: .string(String(repeating: "x", count: 1000)), priority: .string("pp")))
    #expect(columns.byteCount == 2 + 1000 + 2)
    #expect(!columns.isFull)
    for i in 1..<RecordColumns.recordsPerStatementMax {
        columns.append(path: Array("k\(i)\u{1}".utf8), StoredRecord(leaf: .integer(Int64(i)), priority: nil))
    }
    #expect(columns.isFull)
    var large = RecordColumns()
    large.append(path: [1], StoredRecord(leaf: .string(String(repeating: "y", count: RecordColumns.bytesPerStatementMax)), priority: nil))
    #expect(large.isFull && large.count == 1)
}

@Test func oversizedValuesAreRefusedBeforeAnythingIsSent() {
    let statement = PostgresStatement("SELECT $1", [PostgresParameter(type: .bytea, bytes: [UInt8](repeating: 0, count: 8))])
    #expect(throws: Never.self) { try PostgresConnection.checkSize(of: statement) }
    #expect(PostgresConnection.valueByteCountMax == (1 << 30) - 1)
    #expect(StorageError.classify("54000").0 == .invalidData)
}
