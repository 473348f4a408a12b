import Foundation
import HearthClient
import HearthCore
import HearthSupport
import HearthTriggers

/// A running functions process: registers with the server, follows the feed from the cursor the server
/// keeps, hands events to handlers as ``EventSchedule`` says, retries and parks, saves the cursor.
/// Decisions are the schedule's; this class only acts on them.
package final class FunctionsProcess: @unchecked Sendable {  // mutable state in `state`
    private let functions: [RegisteredFunction]
    private let userFunctions: [RegisteredUserFunction]
    private let endpoint: ConsumerEndpoint
    private let database: Database
    private let concurrency: Int
    private let log: @Sendable (String) -> Void
    private var stream: FeedStream?

    private struct State {
        var schedule: EventSchedule
        var running = 0
        var paused = false
        var saved: Int64
        var saving = false
        var lastSave = Date()
        var stopping = false
        var following = false
    }
    private let state: Locked<State>

    /// Events buffered before the feed is paused, and below which it goes on.
    static let bufferedHigh = 20_000
    static let bufferedLow = 5_000
    /// How often the cursor is saved while it moves, and at least how often the server hears from us.
    static let cursorSaveSeconds = 0.2
    static let heartbeatSeconds = 10.0
    static let retry = RetrySchedule(firstMilliseconds: 500, capMilliseconds: 60_000)

    init(
        functions: [RegisteredFunction], userFunctions: [RegisteredUserFunction], server: ServerAddress, name: String, token: String, database: Database, concurrency: Int,
        log: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
    ) {
        self.functions = functions
        self.userFunctions = userFunctions
        endpoint = ConsumerEndpoint(server: server, name: name, token: token)
        self.database = database
        self.concurrency = concurrency
        self.log = log
        state = Locked(State(schedule: EventSchedule(cursor: 0), saved: 0))
    }

    /// Registers, then follows the feed; retries registration until the server answers.
    func start() {
        Task { await register(failures: 0) }
    }

    /// Whether the process registered and follows the feed (hearth-bench waits for it).
    package var isFollowing: Bool { state.withLock { $0.following } }

    private func register(failures: Int) async {
        let paths = Array(Set(functions.map(\.pattern.description))).sorted()
        do {
            let (after, authAfter) = try await endpoint.register(paths: paths, auth: !userFunctions.isEmpty)
            state.withLock { state in
                state.schedule = EventSchedule(cursor: after)
                state.saved = after
            }
            let count = functions.count + userFunctions.count
            log("\(endpoint.name): \(count) function\(count == 1 ? "" : "s") on \(endpoint.server.origin) (\(endpoint.server.namespace)), from feed position \(after)")
            if !userFunctions.isEmpty { Task { await followAuthEvents(from: authAfter) } }
            guard !functions.isEmpty else {
                state.withLock { $0.following = true }
                return
            }
            let stream = FeedStream(server: endpoint.server, token: endpoint.token, after: after) { [weak self] signal in
                self?.handle(signal) ?? false
            }
            self.stream = stream
            stream.start()
            state.withLock { $0.following = true }
            startCursorTimer()
        } catch let failure as ConsumerEndpoint.Failure where [400, 401, 403, 404, 501].contains(failure.status) {
            log("\(endpoint.name): \(failure.description)")
            exit(1)
        } catch {
            if failures % 10 == 0 { log("\(endpoint.name): cannot register yet (\(error)); trying again") }
            try? await Task.sleep(nanoseconds: UInt64(min(5.0, 0.2 * Double(failures + 1)) * 1e9))
            await register(failures: failures + 1)
        }
    }

    // MARK: The feed

    private func handle(_ signal: FeedStream.Signal) -> Bool {
        switch signal {
        case .entry(let entry): return receive(entry)
        case .trouble(let message):
            log("\(endpoint.name): \(message)")
            return true
        case .resync(let after, let message):
            log("\(endpoint.name): \(message) Events in between were not handled; going on from what the feed kept.")
            Task { await skipTrimmed(after: after) }
            return true
        }
    }

    private func skipTrimmed(after: Int64) async {
        do {
            let trimmed = try await endpoint.trimmedThrough()
            state.withLock { state in
                state.schedule.receive(position: trimmed, jobs: [])
            }
            stream?.skip(to: trimmed)
        } catch {
            log("\(endpoint.name): \(error); trying again")
            try? await Task.sleep(nanoseconds: 1_000_000_000)
            await skipTrimmed(after: after)
        }
    }

    /// An entry's events for each function, in the schedule; false when the buffer is full.
    private func receive(_ entry: FeedEntry) -> Bool {
        var jobs: [EventSchedule.Job] = []
        var byPattern: [TriggerPattern: [TriggerEvent]] = [:]
        for (index, function) in functions.enumerated() {
            let events = byPattern[function.pattern] ?? entry.events(at: function.pattern)
            byPattern[function.pattern] = events
            for event in events where function.kinds.contains(event.kind) {
                jobs.append(EventSchedule.Job(function: index, event: event))
            }
        }
        let full = state.withLock { state in
            state.schedule.receive(position: entry.position, jobs: jobs)
            if state.schedule.buffered >= Self.bufferedHigh { state.paused = true }
            return state.paused
        }
        pump()
        return !full
    }

    // MARK: Running handlers

    /// Starts jobs while there are slots.
    private func pump() {
        while let job = state.withLock({ state -> EventSchedule.Job? in
            guard state.running < concurrency, !state.stopping, let job = state.schedule.next() else { return nil }
            state.running += 1
            return job
        }) {
            Task.detached { [self] in
                await perform(job)
                finished(job)
            }
        }
    }

    private func finished(_ job: EventSchedule.Job) {
        let resume = state.withLock { state in
            state.running -= 1
            state.schedule.finish(job)
            guard state.paused, state.schedule.buffered <= Self.bufferedLow else { return false }
            state.paused = false
            return true
        }
        if resume { stream?.resume() }
        pump()
    }

    /// Runs the job's handler until it returns or its attempts run out, then parks it.
    private func perform(_ job: EventSchedule.Job) async {
        let function = functions[job.function]
        let event: [String: Any] = [
            "id": job.event.id, "position": job.event.position, "type": job.event.kind.rawValue, "path": "/" + job.event.location.description,
            "params": job.event.parameters, "authType": job.event.authType, "authId": job.event.authId ?? NSNull(), "time": job.event.time,
        ]
        await attempt(function.name, attempts: function.attempts, id: job.event.id, position: job.event.position, at: "/" + job.event.location.description, event: event) {
            try await function.handler(await self.databaseEvent(job.event))
        }
    }

    /// Runs `body` until it returns or `attempts` run out (waiting ``retry``'s delays between), then
    /// parks the event.
    private func attempt(
        _ function: String, attempts allowed: Int, id: String, position: Int64, at location: String, event: [String: Any],
        _ body: @Sendable () async throws -> Void
    ) async {
        var attempts = 0
        var lastError = ""
        while attempts < allowed {
            attempts += 1
            do {
                try await body()
                return
            } catch {
                lastError = String(describing: error)
                if attempts < allowed {
                    let wait = Self.retry.delay(afterFailures: attempts, random: Double.random(in: 0..<1))
                    try? await Task.sleep(nanoseconds: UInt64(wait) * 1_000_000)
                }
            }
        }
        log("\(endpoint.name): \(function) failed \(attempts) times on event \(id) at \(location): \(lastError); parked")
        await park(function: function, id: id, position: position, attempts: attempts, error: lastError, event: event)
    }

    /// Reports the parked event to the server, until it takes it (the event is not done before).
    private func park(function: String, id: String, position: Int64, attempts: Int, error: String, event: [String: Any]) async {
        var failures = 0
        while true {
            do {
                return try await endpoint.park(function: function, id: id, position: position, attempts: attempts, error: error, event: event)
            } catch {
                failures += 1
                if failures % 10 == 1 { log("\(endpoint.name): could not park \(id) yet: \(error)") }
                try? await Task.sleep(nanoseconds: UInt64(min(5.0, 0.2 * Double(failures))) * 1_000_000_000 + 200_000_000)
            }
        }
    }

    // MARK: User functions

    /// How often the auth feed is read while nothing happens.
    static let authPollNanoseconds: UInt64 = 500_000_000

    /// Follows the auth feed from `start` (nil: its head, the first time): each event to the user
    /// functions of its kind, one at a time, in order; the cursor saved after each.
    private func followAuthEvents(from start: Int64?) async {
        var cursor = start
        while cursor == nil && !isStopping {
            do {
                let head = try await endpoint.authEvents(after: Int64.max, limit: 0).head
                try await endpoint.saveAuthCursor(head)
                cursor = head
            } catch {
                log("\(endpoint.name): the auth feed cannot be read yet: \(error)")
                try? await Task.sleep(nanoseconds: 2_000_000_000)
            }
        }
        guard var position = cursor else { return }
        while !isStopping {
            let page: [[String: Any]]
            do {
                page = try await endpoint.authEvents(after: position, limit: 100).events
            } catch let failure as ConsumerEndpoint.Failure where failure.status == 410 {
                let trimmed = failure.trimmedThrough?.int64Value ?? position
                log("\(endpoint.name): \(failure.description) User events in between were not handled; going on from what the feed kept.")
                position = max(position, trimmed)
                continue
            } catch {
                log("\(endpoint.name): \(error)")
                try? await Task.sleep(nanoseconds: 2_000_000_000)
                continue
            }
            if page.isEmpty {
                try? await Task.sleep(nanoseconds: Self.authPollNanoseconds)
                continue
            }
            for json in page {
                guard !isStopping else { return }
                guard let eventPosition = (json["position"] as? NSNumber)?.int64Value else { continue }
                await handleUserEvent(json, at: eventPosition)
                position = eventPosition
                await saveAuthCursor(position)
            }
        }
    }

    private var isStopping: Bool { state.withLock { $0.stopping } }

    private func handleUserEvent(_ json: [String: Any], at position: Int64) async {
        guard let type = json["type"] as? String, let kind = RegisteredUserFunction.Kind(rawValue: type),
            let user = (json["user"] as? [String: Any]).flatMap(UserRecord.init(json:))
        else { return }
        let time = Date(timeIntervalSince1970: ((json["time"] as? NSNumber)?.doubleValue ?? 0) / 1000)
        let event = UserEvent(
            data: user, id: "auth-\(position)", time: time,
            type: "providers/firebase.auth/eventTypes/user.\(kind == .created ? "create" : "delete")", database: database, position: position)
        let described: [String: Any] = ["id": event.id, "position": position, "type": type, "uid": user.uid, "path": "(auth) \(user.uid)"]
        for function in userFunctions where function.kind == kind {
            await attempt(function.name, attempts: function.attempts, id: event.id, position: position, at: "user \(user.uid)", event: described) {
                try await function.handler(event)
            }
        }
    }

    private func saveAuthCursor(_ position: Int64) async {
        var failures = 0
        while !isStopping {
            do { return try await endpoint.saveAuthCursor(position) } catch {
                failures += 1
                if failures % 10 == 1 { log("\(endpoint.name): the auth cursor could not be saved yet: \(error)") }
                try? await Task.sleep(nanoseconds: 500_000_000)
            }
        }
    }

    /// The handler's view of `event`: snapshots with admin references. When the feed left out the
    /// earlier value (too large), the location is read as it is now instead.
    private func databaseEvent(_ event: TriggerEvent) async -> DatabaseEvent<Change<DataSnapshot>> {
        var after = DataSnapshot(in: database, at: event.location, of: event.after)
        if event.beforeOmitted, let now = try? await database.reference(withPath: event.location.description).getData() {
            after = now
        }
        return DatabaseEvent(
            data: Change(before: DataSnapshot(in: database, at: event.location, of: event.before), after: after),
            params: event.parameters, id: event.id, time: Date(timeIntervalSince1970: Double(event.time) / 1000),
            ref: "/" + event.location.description, type: "google.firebase.database.ref.v1.\(event.kind.rawValue)",
            authType: event.authType, authId: event.authId, database: database, position: event.position)
    }

    // MARK: The cursor

    private func startCursorTimer() {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + Self.cursorSaveSeconds, repeating: Self.cursorSaveSeconds)
        timer.setEventHandler { [self] in saveCursorIfDue() }
        timer.resume()
        Self.timers.withLock { $0.append(timer) }
    }

    private static let timers = Locked<[any DispatchSourceTimer]>([])

    private func saveCursorIfDue() {
        let due = state.withLock { state -> Int64? in
            guard !state.saving else { return nil }
            let moved = state.schedule.cursor > state.saved
            guard moved || Date().timeIntervalSince(state.lastSave) >= Self.heartbeatSeconds else { return nil }
            state.saving = true
            return state.schedule.cursor
        }
        guard let due else { return }
        Task {
            let ok: Bool
            do {
                try await endpoint.saveCursor(due)
                ok = true
            } catch {
                log("\(endpoint.name): the cursor could not be saved: \(error)")
                ok = false
            }
            state.withLock { state in
                state.saving = false
                state.lastSave = Date()
                if ok { state.saved = max(state.saved, due) }
            }
        }
    }

    /// Stops reading, lets the handlers under way end (up to 10 s), and saves the cursor.
    package func stop() {
        state.withLock { $0.stopping = true }
        stream?.stop()
        let deadline = Date(timeIntervalSinceNow: 10)
        while state.withLock({ $0.running > 0 }) && Date() < deadline { usleep(20_000) }
        let cursor = state.withLock { $0.schedule.cursor }
        let saved = DispatchSemaphore(value: 0)
        Task {
            try? await endpoint.saveCursor(cursor)
            saved.signal()
        }
        _ = saved.wait(timeout: .now() + 5)
        log("\(endpoint.name): stopped at feed position \(cursor)")
    }
}
