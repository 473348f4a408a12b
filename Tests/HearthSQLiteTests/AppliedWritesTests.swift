import Foundation
import HearthCore
import HearthSQL
import HearthStorage
import Testing

@testable import HearthSQLite

/// The IDs of applied writes (HearthClient's `wid`): stored in their write's commit, read back in order
/// after a restart, the newest kept; a file from before them gains the table.
struct AppliedWritesTests {
    private func batch(_ key: String, id: String?) -> WriteBatch {
        var batch = WriteBatch(operations: [.put(Path(key), Node(1))])
        batch.writeID = id
        return batch
    }

    @Test func theIDsOfCommittedWritesSurviveARestartInOrder() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var engine = try SQLiteStorageEngine(directory: directory, namespace: "ids")
        #expect(try engine.rememberedWriteIDs().isEmpty)
        try await engine.append(batch("a", id: "run-1"))
        try await engine.append(batch("b", id: nil))
        try await engine.append(batch("c", id: "run-3"))
        engine.close()
        engine = try SQLiteStorageEngine(directory: directory, namespace: "ids")
        #expect(try engine.rememberedWriteIDs() == ["run-1", "run-3"])
        #expect(try engine.load(progress: nil).child(at: "c") == Node(1))
        engine.close()
    }

    @Test func aLayoutThreeFileGainsTheTable() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var engine = try SQLiteStorageEngine(directory: directory, namespace: "old")
        try await engine.append(batch("a", id: nil))
        engine.close()
        let path = directory + "/old.sqlite"
        do {
            let connection = try SQLiteConnection(path: path, create: false)
            try connection.execute("DROP TABLE applied_writes; PRAGMA user_version = 3;")
            connection.close()
        }
        engine = try SQLiteStorageEngine(directory: directory, namespace: "old")
        try await engine.append(batch("b", id: "run-2"))
        #expect(try engine.rememberedWriteIDs() == ["run-2"])
        #expect(try engine.load(progress: nil).child(at: "a") == Node(1))
        engine.close()
    }

    @Test func theNewestAreKept() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let connection = try SQLiteConnection(path: directory + "/trim.sqlite", create: true)
        defer { connection.close() }
        try connection.execute(SQLiteSchema.create)
        let statements = try SQLiteStorageEngine.Statements(connection)
        var table = try AppliedWriteTable(reading: connection, capacity: 16)
        // Trimmed once past 16 + 2: back to the newest 16.
        for number in 1...18 { try table.append([batch("x", id: "w\(number)")], statements: statements) }
        #expect(try AppliedWriteTable.read(connection).count == 18)
        try table.append([batch("x", id: "w19")], statements: statements)
        #expect(try AppliedWriteTable.read(connection) == (4...19).map { "w\($0)" })
        #expect(table.count == 16)
    }
}
