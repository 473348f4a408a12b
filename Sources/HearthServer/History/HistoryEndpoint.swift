import HearthCore
import HearthProtocol
import HearthStorage
import HearthSupport
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
    /// Where a failing location index is reported (the history is then read from the feed).
    let log: Log

    func serve(_ request: HTTPRequest, namespace: Namespace, responder: any HTTPResponder) throws(RESTError) {
        guard request.method == .get else { throw RESTError(405, "The history is read with GET") }
        guard let text = request.queryItems.last(where: { $0.name == "path" })?.value, text.hasPrefix("/") else {
            throw RESTError(400, "history needs path=/a/location (the location whose changes to list)")
        }
        let location = Path(text)
        do { try KeyValidation.validate(readPath: location) } catch { throw RESTError(400, "path=\(text.prefix(200)): \(error.message)") }
        let limit = Int(try FeedEndpoint.integer(request, "limit", default: 50, range: 1...Int64(ServerLimits.historyPageChangesMax)))
        let before = try FeedEndpoint.integer(request, "before", default: Int64.max, range: 1...Int64.max)
        let pending = LoopBound(responder)
        let executor = executor
        let engine = namespace.database.engine
        @Sendable func respond(_ response: HTTPResponse) { executor.execute { pending.value.respond(response) } }
        @Sendable func failed(_ error: StorageError) {
            respond(RESTResponses.error(RESTError(error.code == .unsupported ? 501 : 500, error.message)))
        }
        @Sendable func scan() {
            Self.scan(HistoryScan(location: location, limit: limit, budget: ServerLimits.historyScanEntriesMax, before: before), engine: engine) { result in
                switch result {
                case .failure(let error): failed(error)
                case .success(let (scan, next)):
                    respond(RESTResponses.json(200, Self.body(scan.found, next: next, scanned: scan.scanned, trimmedThrough: scan.trimmedThrough)))
                }
            }
        }
        let log = log, name = namespace.name
        // From the feed's location index when the engine has one (and the location is not among the most
        // often changed), else by reading the feed newest first; also when the index fails (it is tried
        // again on the next request): the feed answers without it.
        engine.feedLocations(of: location, before: before, limit: limit) { result in
            switch result {
            case .failure(let error) where error.code == .closed: failed(error)
            case .failure(let error):
                log("hearth: the change feed's location index of '\(name)' failed (\(error.code.rawValue)): \(error.message); histories read the feed instead until it works again.")
                scan()
            case .success(let candidates?):
                Self.readIndexed(IndexedHistory(location: location, limit: limit, before: before, candidates: candidates), from: engine) { result in
                    switch result {
                    case .failure(let error): failed(error)
                    case .success(let (history, next, trimmed)):
                        respond(RESTResponses.json(200, Self.body(history.found, next: next, scanned: history.scanned, trimmedThrough: trimmed)))
                    }
                }
            case .success(nil): scan()
            }
        }
    }

    /// Walks the feed newest first as ``HistoryScan`` decides.
    static func scan(
        _ scan: HistoryScan, engine: any StorageEngine, completion: @escaping @Sendable (Result<(HistoryScan, Int64?), StorageError>) -> Void
    ) {
        @Sendable func advance(_ step: HistoryScan.Step, _ scan: HistoryScan) {
            switch step {
            case .answer(let next): completion(.success((scan, next)))
            case .read(let after, let limit):
                engine.readFeed(after: after, limit: limit) { result in
                    switch result {
                    case .failure(let error): completion(.failure(error))
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

    /// Reads the entries after the index's end, then the candidates' entries, and answers.
    static func readIndexed(
        _ history: IndexedHistory, from engine: any StorageEngine,
        completion: @escaping @Sendable (Result<(IndexedHistory, Int64?, Int64), StorageError>) -> Void
    ) {
        @Sendable func candidates(tail: [ChangeFeedPage.Entry], trimmed: Int64) {
            engine.readFeed(at: history.candidates.positions) { result in
                switch result {
                case .failure(let error): completion(.failure(error))
                case .success(let page):
                    var history = history
                    let next = history.answer(tail: tail, indexed: page.entries)
                    completion(.success((history, next, max(trimmed, page.trimmedThrough))))
                }
            }
        }
        @Sendable func tail(after position: Int64, _ read: [ChangeFeedPage.Entry]) {
            engine.readFeed(after: position, limit: 10_000) { result in
                switch result {
                case .failure(let error): completion(.failure(error))
                case .success(let page):
                    guard let last = page.entries.last else { return candidates(tail: read, trimmed: page.trimmedThrough) }
                    tail(after: last.position, read + page.entries)
                }
            }
        }
        tail(after: history.candidates.indexedThrough, [])
    }

    static func body(_ found: [LocationChange], next: Int64?, scanned: Int, trimmedThrough: Int64) -> [UInt8] {
        let changes = found.map(\.json).joined(separator: ",")
        return Array(#"{"changes":[\#(changes)],"next":\#(next.map(String.init) ?? "null"),"scanned":\#(scanned),"trimmedThrough":\#(trimmedThrough)}"#.utf8)
    }
}
