public import HearthCore

/// A write's change-feed entry in its stored form (ChangeFeedRecord+Encoding.swift), made when the
/// database takes the write and carried on its ``WriteBatch`` to the engine, which copies the bytes into
/// the commit's feed row.
///
/// Made on the writer's side, not on the storage thread, because every write waits for both in turn
/// (a group is committed once the writers of the last one have appended their next writes): the storage
/// thread reading the note's paths, strings and values, allocated on the writer's core, cost storage.write
/// a tenth of its throughput in retains and cache misses; copying one buffer costs it little
/// (docs/BENCHMARKS.md, storage.write.feed).
public struct ChangeFeedEntry: Sendable, Equatable {
    /// The stored form, earlier values left out when they took more than the engine keeps.
    public let bytes: [UInt8]

    /// The entry of a write the tree made with `changes`: the note's fields; the written values as stored
    /// (server values such as `{".sv":"timestamp"}` resolved); what each changed location held before,
    /// after `context` (the earlier values of the note's ``ChangeFeedNote/contexts``). Earlier values
    /// past `beforeBytesMax` bytes are left out (`beforeOmitted`), and not encoded at all.
    public init(note: ChangeFeedNote, changes: ChangeSet, context: [ChangeFeedValue], beforeBytesMax: Int) {
        var encoder = Encoder(note: note)
        let changed = changes.changes
        switch note.data {
        case .set(let value):
            let stored = changed.count == 1 && changed[0].path == note.path ? changed[0].new : value
            encoder.appendValue(stored)
        case .update(let values):
            StorageBytes.appendVarint(values.count, to: &encoder.bytes)
            let matched = values.count == changed.count
            for index in values.indices {
                let value = values[index]
                StorageBytes.append(value.path, to: &encoder.bytes)
                if matched && changed[index].path == note.path.appending(path: value.path) {
                    encoder.appendValue(changed[index].new)
                } else {
                    encoder.appendValue(value.value)
                }
            }
        }
        encoder.appendWriter(note)
        encoder.appendBefore(count: context.count + changed.count, beforeBytesMax: beforeBytesMax) { index in
            index < context.count
                ? (context[index].path, context[index].value)
                : (changed[index - context.count].path, changed[index - context.count].old)
        }
        bytes = encoder.bytes
    }

    /// The entry of `note` (its data as given) that replaced `before`: with no change set, the data is
    /// the note's and the earlier values are `before`.
    public init(note: ChangeFeedNote, before: [ChangeFeedValue], beforeBytesMax: Int) {
        self.init(note: note, changes: ChangeSet(), context: before, beforeBytesMax: beforeBytesMax)
    }

    /// The stored form's fields in order: version, time, flags and path first, then the data (by the
    /// initialisers), the writer, and the earlier values last, so that when they are too large they are
    /// cut off where they start.
    private struct Encoder {
        var bytes: [UInt8] = []
        private var flagsIndex = 0

        init(note: ChangeFeedNote) {
            var flags: UInt8 = 0
            if case .update = note.data { flags |= ChangeFeedRecord.Flag.update }
            flags |= ChangeFeedRecord.authIndex(note.authType) << ChangeFeedRecord.Flag.authShift
            if note.authId != nil { flags |= ChangeFeedRecord.Flag.hasAuthId }
            bytes.reserveCapacity(256)
            bytes.append(ChangeFeedRecord.encodingVersion)
            StorageBytes.appendVarint(Int(clamping: max(0, note.time)), to: &bytes)
            flagsIndex = bytes.count
            bytes.append(flags)
            StorageBytes.append(note.path, to: &bytes)
        }

        /// A value's lossless JSON after its length, made in place: the length's varint is given one
        /// byte first and widened afterwards for values of 128 bytes or more.
        mutating func appendValue(_ value: Node) {
            let lengthAt = bytes.count
            bytes.append(0)
            value.appendJSON(to: &bytes, format: .lossless)
            let length = bytes.count - lengthAt - 1
            guard length >= 0x80 else {
                bytes[lengthAt] = UInt8(length)
                return
            }
            var width = 1
            while length >> (7 * width) != 0 { width += 1 }
            bytes.insert(contentsOf: repeatElement(0, count: width - 1), at: lengthAt + 1)
            var rest = UInt(length)
            for offset in 0..<width {
                bytes[lengthAt + offset] = UInt8(truncatingIfNeeded: rest) | (offset + 1 < width ? 0x80 : 0)
                rest >>= 7
            }
        }

        mutating func appendWriter(_ note: ChangeFeedNote) {
            if let authId = note.authId { StorageBytes.appendSlice(authId.utf8, to: &bytes) }
            StorageBytes.appendSlice(note.channel.utf8, to: &bytes)
        }

        /// `count` locations and their earlier values, or none and the `beforeOmitted` flag when they
        /// take more than `beforeBytesMax` bytes (encoding stops there).
        mutating func appendBefore(count: Int, beforeBytesMax: Int, _ location: (Int) -> (Path, Node)) {
            let beforeStart = bytes.count
            StorageBytes.appendVarint(count, to: &bytes)
            for index in 0..<count {
                let (path, value) = location(index)
                StorageBytes.append(path, to: &bytes)
                appendValue(value)
                if bytes.count - beforeStart > beforeBytesMax { break }
            }
            if bytes.count - beforeStart > beforeBytesMax {
                bytes.removeSubrange(beforeStart...)
                bytes[flagsIndex] |= ChangeFeedRecord.Flag.beforeOmitted
            }
        }
    }
}
