import HearthStorage
import Testing

/// A backup's manifest read back, refused when damaged, and which backups a schedule keeps.
struct BackupManifestTests {
    static let manifest = BackupManifest(
        namespace: "demo", time: 1_796_000_000_000, position: 40960, format: .sqlite, dataFile: "demo.sqlite", bytes: 1234,
        hash: "33HE/+TIw4/JOUJjV0GXgPfGuQk=", catchUpEntries: 3, seconds: 0.25)

    @Test func readsBackWhatItWrote() throws {
        #expect(try BackupManifest(json: Self.manifest.json) == Self.manifest)
    }

    @Test func aDamagedManifestIsRefusedSayingWhat() {
        for (text, what) in [
            ("{", "not JSON"), (#"{"namespace":"demo"}"#, "format is missing"),
            (Self.manifest.json.replacingOccurrences(of: "40960", with: "-1"), "position is not a whole number"),
            (Self.manifest.json.replacingOccurrences(of: #""demo.sqlite""#, with: #""../auth.sqlite""#), "dataFile is not a file name"),
            (Self.manifest.json.replacingOccurrences(of: #""sqlite""#, with: #""zip""#), "neither sqlite nor json"),
        ] {
            #expect { try BackupManifest(json: text) } throws: { error in
                (error as? StorageError).map { $0.code == .corrupt && $0.message.contains(what) } ?? false
            }
        }
    }

    @Test func theScheduleIsDueAtOnceThenEveryPeriodAndKeepsTheNewest() {
        let schedule = BackupSchedule(everyMilliseconds: 3_600_000, keep: 2)
        #expect(schedule.nextRound(newest: nil) == 0)
        #expect(schedule.nextRound(newest: 10_000) == 3_610_000)
        #expect(schedule.removed([5, 1, 9, 3]) { Int64($0) } == [3, 1])
        #expect(schedule.removed([5]) { Int64($0) }.isEmpty)
    }
}
