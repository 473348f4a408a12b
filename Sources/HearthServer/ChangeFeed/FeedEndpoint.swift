import HearthCore
import HearthProtocol
import HearthStorage

/// `GET /.feed.json?ns=NS&after=POSITION&limit=N`, for admins: the namespace's change feed from a
/// position (docs/feed.md). The page is read off the loop (the engine's feed reader) and answered on it.
///
///     {"entries":[{"position":8192,"time":…,"type":"set","path":"/jokes/j1",…}],"next":8192,"trimmedThrough":0}
///
/// A position that retention has passed answers 410 with what to do: read the data again and follow
/// the feed from `trimmedThrough`. With `Accept: text/event-stream` the feed streams instead
/// (``ChangeFeedStream``).
struct FeedEndpoint {
    let executor: any LoopExecutor
    let ids: SubscriberIDs

    func serve(_ request: HTTPRequest, namespace: Namespace, responder: any HTTPResponder) throws(RESTError) {
        guard request.method == .get else { throw RESTError(405, "The change feed is read with GET") }
        let after = try Self.integer(request, "after", default: 0, range: 0...Int64.max)
        if request.headers["accept"]?.contains("text/event-stream") == true {
            let stream = ChangeFeedStream(id: ids.next(), after: after, responder: responder, namespace: namespace, executor: executor)
            responder.startStream(status: 200, headers: [
                ("content-type", "text/event-stream"), ("cache-control", "no-cache"), ("x-content-type-options", "nosniff"),
            ])
            namespace.changeFeedStreams[stream.id] = stream
            responder.onClose = { [weak namespace] in namespace?.changeFeedStreams[stream.id] = nil }
            stream.start()
            return
        }
        let limit = Int(try Self.integer(
            request, "limit", default: Int64(ServerLimits.feedPageEntriesDefault), range: 1...Int64(ServerLimits.feedPageEntriesMax)))
        let pending = LoopBound(responder)
        let executor = executor
        namespace.database.engine.readFeed(after: after, limit: limit) { result in
            let response = Self.response(result, after: after)
            executor.execute { pending.value.respond(response) }
        }
    }

    static func response(_ result: Result<ChangeFeedPage, StorageError>, after: Int64) -> HTTPResponse {
        switch result {
        case .failure(let error) where error.code == .unsupported:
            return RESTResponses.error(RESTError(501, error.message))
        case .failure(let error):
            return RESTResponses.error(RESTError(500, error.message))
        case .success(let page):
            switch resync(after: after, page) {
            case .failure(let error): return RESTResponses.error(error)
            case .success: return RESTResponses.json(200, body(page, after: after))
            }
        }
    }

    /// A 410 when a reader at `after` missed entries retention (or an import) removed.
    static func resync(after: Int64, _ page: ChangeFeedPage) -> Result<Void, RESTError> {
        guard page.needsResync(after: after) else { return .success(()) }
        return .failure(RESTError(
            410,
            "resync needed: entries after position \(after) are gone (retention, or an import, removed everything through \(page.trimmedThrough)). Read the data again, then follow the feed after \(page.trimmedThrough)."))
    }

    /// `{"entries":[…],"next":N,"trimmedThrough":T}`: each stored entry with its position spliced in
    /// front, never parsed again.
    static func body(_ page: ChangeFeedPage, after: Int64) -> [UInt8] {
        var out = Array(#"{"entries":["#.utf8)
        for (index, entry) in page.entries.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            entry.appendServed(to: &out)
        }
        let next = page.entries.last?.position ?? after
        out += Array(#"],"next":\#(next),"trimmedThrough":\#(page.trimmedThrough)}"#.utf8)
        return out
    }

    /// A whole decimal query parameter within `range` (checked: a client's number), or `default`. Also
    /// the history's (``HistoryEndpoint``).
    static func integer(_ request: HTTPRequest, _ name: String, default value: Int64, range: ClosedRange<Int64>) throws(RESTError) -> Int64 {
        guard let text = request.queryItems.last(where: { $0.name == name })?.value else { return value }
        guard let number = Int64(text), range.contains(number) else {
            throw RESTError(400, "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }
}
