import HearthCore
import HearthProtocol
import HearthStorage
import HearthTriggers

/// `GET /.history.json?ns=NS&path=/jokes/j1[&limit=N][&before=POSITION]`, for admins: the changes that
/// touched a location or anything below it, newest first, from the namespace's change feed (docs/feed.md,
/// "History of a location"):
///
///     {"changes":[{"position":…,"time":…,"path":"/jokes/j1","type":"set","before":{…},"after":{…},
///                  "authType":"app_user","authId":"ada","protocol":"realtime"}],
///      "next":16384,"scanned":812,"trimmedThrough":0}
///
/// `next` is the `before` of the next (older) page; null once the oldest entry retention kept was read.
/// The feed is read off the loop (``HistoryScan`` decides each read) and the answer sent on it.
struct HistoryEndpoint {
    let executor: any LoopExecutor

    func serve(_ request: HTTPRequest, namespace: Namespace, responder: any HTTPResponder) throws(RESTError) {
        guard request.method == .get else { throw RESTError(405, "The history is read with GET") }
        guard let text = request.queryItems.last(where: { $0.name == "path" })?.value, text.hasPrefix("/") else {
            throw RESTError(400, "history needs path=/a/location (the location whose changes to list)")
        }
        let location = Path(text)
        do { try KeyValidation.validate(readPath: location) } catch { throw RESTError(400, "path=\(text.prefix(200)): \(error.message)") }
        let limit = Int(try FeedEndpoint.integer(request, "limit", default: 50, range: 1...Int64(ServerLimits.historyPageChangesMax)))
        let before = try FeedEndpoint.integer(request, "before", default: Int64.max, range: 1...Int64.max)
        let scan = HistoryScan(location: location, limit: limit, budget: ServerLimits.historyScanEntriesMax, before: before)
        let pending = LoopBound(responder)
        let executor = executor
        let engine = namespace.database.engine
        @Sendable func advance(_ step: HistoryScan.Step, _ scan: HistoryScan) {
            switch step {
            case .answer(let next):
                let body = Self.body(scan, next: next)
                executor.execute { pending.value.respond(RESTResponses.json(200, body)) }
            case .read(let after, let limit):
                engine.readFeed(after: after, limit: limit) { result in
                    switch result {
                    case .failure(let error):
                        let status = error.code == .unsupported ? 501 : 500
                        executor.execute { pending.value.respond(RESTResponses.error(RESTError(status, error.message))) }
                    case .success(let page):
                        var scan = scan
                        let next = scan.take(page)
                        advance(next, scan)
                    }
                }
            }
        }
        advance(scan.start, scan)
    }

    static func body(_ scan: HistoryScan, next: Int64?) -> [UInt8] {
        let changes = scan.found.map(\.json).joined(separator: ",")
        return Array(#"{"changes":[\#(changes)],"next":\#(next.map(String.init) ?? "null"),"scanned":\#(scan.scanned),"trimmedThrough":\#(scan.trimmedThrough)}"#.utf8)
    }
}
