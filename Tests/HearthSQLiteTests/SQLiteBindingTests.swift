import Foundation
import HearthSQL
import Testing

/// A binding SQLite refuses (here longer than its length limit; under a memory limit, out of memory)
/// leaves the parameter NULL: the step must report it, not store NULL or fail on a constraint.
@Test func aRefusedBindingIsReportedByTheStepAndNothingIsStored() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let connection = try SQLiteConnection(path: "\(directory)/binding.sqlite", create: true)
    defer { connection.close() }
    try connection.execute("CREATE TABLE t(v BLOB)")  // nullable: a NULL would have gone in silently
    connection.limitValueLength(to: 100)
    let insert = try connection.prepare("INSERT INTO t(v) VALUES (?1)")
    insert.bind(1, blob: [UInt8](repeating: 7, count: 200))
    let error = #expect(throws: SQLiteError.self) { try insert.run() }
    #expect(error?.code == .tooBig)
    #expect(try connection.integer("SELECT count(*) FROM t") == 0)
    // The statement is usable again: the next binding that fits is stored.
    insert.bind(1, blob: [1, 2, 3])
    try insert.run()
    #expect(try connection.integer("SELECT count(*) FROM t") == 1)
}
