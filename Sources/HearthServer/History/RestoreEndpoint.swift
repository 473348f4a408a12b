import Dispatch
import HearthCore
import HearthProtocol
import HearthStorage
import HearthTriggers

/// `POST /.restore.json?ns=NS`, for admins (the console's restore): a location as it was just before a
/// feed position, from the data now with every later write undone (``FeedRestore``, docs/operations.md),
/// or as a scheduled backup holds it, written as one admin write into another namespace or in place:
///
///     {"path":"/jokes","beforePosition":40960,"into":"demo-before"}   or   {…,"inPlace":true}
///     → {"path":"/jokes","into":"demo-before","undone":12}
///     {"path":"/","backup":"20261205T100200123Z","into":"demo-at-ten"}
///
/// The data is the namespace's committed tree, read on the loop before the feed (so every write it holds
/// is in the feed read after it); the feed is read off the loop; the write goes through the write
/// pipeline like any other, so listeners see it and, in place, it is in the history and can be undone.
struct RestoreEndpoint {
    let executor: any LoopExecutor
    let writes: WritePipeline
    let backups: BackupCatalogue?
    /// Opens the namespace written into (answering an error itself when it cannot).
    let withNamespace: (String, @escaping (Namespace) throws(RESTError) -> Void) -> Void

    struct Request: Equatable {
        enum Moment: Equatable {
            case beforePosition(Int64)
            /// A scheduled backup, by its name.
            case backup(String)
        }
        var path: Path
        var moment: Moment
        /// The namespace written into; nil: in place.
        var into: String?

        /// Reads and checks the body.
        init(body: [UInt8], namespace: String) throws(RESTError) {
            guard let node = try? Node(jsonBytes: body), node.hasChildren else {
                throw RESTError(400, #"Send {"path":"/location","beforePosition":N,"into":"namespace"} or {…,"inPlace":true}"#)
            }
            guard let text = node.child("path").stringValue, text.hasPrefix("/") else { throw RESTError(400, "path is a location such as /jokes") }
            path = Path(text)
            do { try KeyValidation.validate(writePath: path) } catch { throw RESTError(400, "path \(text.prefix(200)): \(error.message)") }
            if let backup = node.child("backup").stringValue {
                // A directory's name, never a path.
                guard (1...64).contains(backup.count), backup.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
                    throw RESTError(400, "backup is a backup's name, such as 20261205T100200123Z")
                }
                moment = .backup(backup)
            } else {
                guard let number = node.child("beforePosition").numberValue, let position = Int64(exactly: number), position > 0 else {
                    throw RESTError(400, "beforePosition is a feed position (a whole number above 0, as the history shows), or give a backup")
                }
                moment = .beforePosition(position)
            }
            let inPlace = node.child("inPlace").boolValue == true
            switch (node.child("into").stringValue, inPlace) {
            case (let name?, false):
                guard NamespaceName.isValid(name) else { throw RESTError(400, NamespaceName.invalidMessage(name)) }
                guard name != namespace else { throw RESTError(400, "into names this namespace: say inPlace instead") }
                into = name
            case (nil, true): into = nil
            default: throw RESTError(400, "say where the restored data goes: into (a namespace) or inPlace (true), one of them")
            }
        }
    }

    func serve(_ request: HTTPRequest, namespace: Namespace, responder: any HTTPResponder) throws(RESTError) {
        guard request.method == .post else { throw RESTError(405, "A restore is asked for with POST") }
        let asked = try Request(body: request.body, namespace: namespace.name)
        switch asked.moment {
        case .beforePosition(let position): undo(before: position, asked, namespace: namespace, responder: responder)
        case .backup(let name): restore(backup: name, asked, namespace: namespace, responder: responder)
        }
    }

    /// The data now with the writes from `position` on undone.
    private func undo(before position: Int64, _ asked: Request, namespace: Namespace, responder: any HTTPResponder) {
        let now = namespace.database.root.child(at: asked.path)
        // Back on the loop with the entries: undone there, then written.
        let finish = LoopBound { (result: Result<[FeedEntry], RESTError>) in
            do throws(RESTError) {
                var root = Node.empty
                _ = root.set(asked.path, to: now)
                let entries = try result.get()
                let restored: Node
                do throws(FeedRestore.Failure) { restored = try FeedRestore.undo(entries[...], on: root).child(at: asked.path) } catch {
                    throw RESTError(409, "cannot restore: \(error.description)")
                }
                write(restored, asked, undone: entries.count, namespace: namespace, responder: responder)
            } catch {
                responder.respond(RESTResponses.error(error))
            }
        }
        let executor = executor
        Self.entries(of: namespace.database.engine, after: position - 1) { result in
            executor.execute { finish.value(result) }
        }
    }

    /// A scheduled backup, loaded off the loop.
    private func restore(backup name: String, _ asked: Request, namespace: Namespace, responder: any HTTPResponder) {
        guard let backups else {
            return responder.respond(RESTResponses.error(RESTError(404, "this server makes no backups (hearth serve --backup-every, docs/operations.md)")))
        }
        let finish = LoopBound { (result: Result<Node, RESTError>) in
            switch result {
            case .success(let root): write(root.child(at: asked.path), asked, undone: 0, namespace: namespace, responder: responder)
            case .failure(let error): responder.respond(RESTResponses.error(error))
            }
        }
        let executor = executor, ns = namespace.name
        DispatchQueue.global().async {
            let result: Result<Node, RESTError>
            do { result = .success(try backups.load(ns, name)) } catch let error as StorageError {
                result = .failure(RESTError(error.code == .notFound ? 404 : 500, error.message))
            } catch {
                result = .failure(RESTError(500, "\(error)"))
            }
            executor.execute { finish.value(result) }
        }
    }

    private func write(_ value: Node, _ asked: Request, undone: Int, namespace: Namespace, responder: any HTTPResponder) {
        let writes = writes
        let body = #"{"path":\#(Node(asked.path.slashed).json()),"into":\#(Node(asked.into ?? namespace.name).json()),"undone":\#(undone)}"#
        func submit(in target: Namespace) {
            writes.submit(.set(asked.path, value, ifHash: nil), by: .admin, in: target, from: .rest) { outcome in
                switch outcome {
                case .success: responder.respond(RESTResponses.json(200, Array(body.utf8)))
                case .failure(let failure): responder.respond(RESTResponses.error(RESTError(500, "the restored data was not written: \(failure)")))
                }
            }
        }
        guard let into = asked.into else { return submit(in: namespace) }
        withNamespace(into) { target in submit(in: target) }
    }

    /// Every feed entry after `position`, read off the loop page by page: refused when retention removed
    /// some (the moment is older than the feed) or there are more than a restore here undoes.
    static func entries(
        of engine: any StorageEngine, after position: Int64, completion: @escaping @Sendable (Result<[FeedEntry], RESTError>) -> Void
    ) {
        @Sendable func read(after: Int64, _ found: [FeedEntry]) {
            engine.readFeed(after: after, limit: 10_000) { result in
                switch result {
                case .failure(let error):
                    completion(.failure(RESTError(error.code == .unsupported ? 501 : 500, error.message)))
                case .success(let page):
                    if page.needsResync(after: position) {
                        return completion(.failure(RESTError(410, "position \(position + 1) is older than the change feed keeps (retention removed everything through \(page.trimmedThrough)); restore from a backup with hearth restore (docs/operations.md).")))
                    }
                    var found = found
                    do throws(DataError) {
                        for entry in page.entries {
                            var json: [UInt8] = []
                            entry.appendServed(to: &json)
                            found.append(try FeedEntry(json: json))
                        }
                    } catch {
                        return completion(.failure(RESTError(500, "a change-feed entry did not read back: \(error.message)")))
                    }
                    guard found.count <= ServerLimits.restoreUndoneEntriesMax else {
                        return completion(.failure(RESTError(413, "more than \(ServerLimits.restoreUndoneEntriesMax) writes came after that moment: restore with hearth restore instead (docs/operations.md).")))
                    }
                    guard let last = page.entries.last else { return completion(.success(found)) }
                    read(after: last.position, found)
                }
            }
        }
        read(after: position, [])
    }
}
