import HearthCore
import HearthProtocol
import HearthWire

/// The data pushes (`d`/`m`, docs/protocol.md §3.2) a committed write means to a realtime listen
/// without a query at one location: never data outside that location, and nothing for a write above
/// it that left it unchanged.
enum RealtimePushes {
    static func pushes(for change: CommittedChange, at location: Path) -> [[UInt8]] {
        let root = change.root
        switch change.write {
        case .set(let written):
            let path = Write.normalized(written)
            if location.contains(path) { return [WireEncoder.set(path: path, node: root.child(at: path))] }
            if path.contains(location) {
                guard change.changed(location) else { return [] }
                return [WireEncoder.set(path: location, node: root.child(at: location))]
            }
            return []
        case .update(let path, let keys):
            if location.contains(path) {
                if keys.contains(where: { $0.last == .priorityKey }) {
                    // A priority key's value is its node: send the nodes whole.
                    return keys.map {
                        let full = Write.normalized(path.appending(path: $0))
                        return WireEncoder.set(path: full, node: root.child(at: full))
                    }
                }
                var data: [UInt8] = [UInt8(ascii: "{")]
                for (index, key) in keys.enumerated() {
                    if index > 0 { data.append(UInt8(ascii: ",")) }
                    Node(key.description).appendJSON(to: &data)
                    data.append(UInt8(ascii: ":"))
                    root.child(at: path.appending(path: key)).appendJSON(to: &data, format: .export)
                }
                data.append(UInt8(ascii: "}"))
                return [WireEncoder.push(.merge, path: path, dataJSON: data)]
            }
            guard path.contains(location) else { return [] }
            var messages: [[UInt8]] = []
            for key in keys {
                let full = Write.normalized(path.appending(path: key))
                if full.contains(location) {
                    guard change.changed(location) else { return [] }
                    return [WireEncoder.set(path: location, node: root.child(at: location))]
                }
                if location.contains(full) { messages.append(WireEncoder.set(path: full, node: root.child(at: full))) }
            }
            return messages
        }
    }
}
