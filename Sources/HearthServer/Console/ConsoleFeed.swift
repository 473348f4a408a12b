import HearthCore
import HearthProtocol

/// `/console/api/changes`: which locations each committed write of a namespace replaced, as server-sent
/// events, without their values (docs/console-api.md). The console's tree refreshes the nodes it shows
/// from them, so watching a busy namespace costs a path per write, not a copy of the data.
final class ConsoleFeed {
    let id: UInt64
    /// The console session that opened it: the feed ends with it.
    let session: String
    let responder: any HTTPResponder
    weak var namespace: Namespace?

    init(id: UInt64, session: String, responder: any HTTPResponder, namespace: Namespace) {
        self.id = id
        self.session = session
        self.responder = responder
        self.namespace = namespace
    }

    /// Sends the locations; a reader over its outbound budget is cut off (its EventSource reconnects
    /// and the page reloads what it shows).
    func changed(_ locations: [Path]) {
        var json: [UInt8] = Array("event: changed\ndata: {\"paths\":[".utf8)
        for (index, location) in locations.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            Node(location.slashed).appendJSON(to: &json)
        }
        json.append(contentsOf: Array("]}\n\n".utf8))
        if !responder.send(json) { disconnect() }
    }

    func keepAlive() {
        if !responder.send(SSE.keepAlive) { disconnect() }
    }

    /// Ends the feed (the namespace is being deleted, the reader is too slow, the server stops).
    func disconnect() {
        responder.onClose = nil
        namespace?.consoleFeeds.removeValue(forKey: id)
        responder.abort()
    }

    func finish() {
        responder.onClose = nil
        namespace?.consoleFeeds.removeValue(forKey: id)
        responder.finish()
    }
}
