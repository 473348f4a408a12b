import Foundation
import HearthCore
import HearthCrypto
import HearthOutbound
import HearthServer
import HearthStorage
import HearthSupport
import HearthTriggers

/// Delivers one hook's events, in feed order, on a thread of its own (`hearth.hook`): reads the feed
/// after its cursor, POSTs each matching event until the receiver answers 2xx, retrying with
/// ``RetrySchedule`` and parking the event as a dead letter after the hook's attempts, then moves on.
/// Its cursor is saved at least every ``cursorSaveMilliseconds`` and whenever it parks or stops: after a
/// crash, the events since the last save are delivered again, with the same ids (at least once).
final class HookWorker: @unchecked Sendable {  // `control`'s fields under its lock; `status` is Locked
    let namespace: String
    let hook: HookDefinition
    private let store: any HookStorage
    private let host: any TriggerHost
    private let settings: HookSettings
    private let control = NSCondition()
    private var woken = false
    private var stopped = false
    private var finished = false
    let status: Locked<HookStatus>

    static let pageEntries = 500
    static let cursorSaveMilliseconds: Int64 = 100

    init(namespace: String, hook: HookDefinition, start: HookCursor, store: any HookStorage, host: any TriggerHost, settings: HookSettings) {
        self.namespace = namespace
        self.hook = hook
        self.store = store
        self.host = host
        self.settings = settings
        status = Locked(HookStatus(cursor: start))
        NamedThread.start("hearth.hook") { [self] in run(from: start) }
    }

    /// A commit arrived: read the feed again. Any thread; returns at once.
    func wake() {
        control.lock()
        woken = true
        control.signal()
        control.unlock()
    }

    /// Stops after the delivery under way (bounded by the hook's timeout), saving the cursor; waits at
    /// most `seconds` for that.
    func stop(waitingSeconds seconds: Double) {
        control.lock()
        stopped = true
        control.broadcast()
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !finished && control.wait(until: deadline) {}
        control.unlock()
    }

    private var isStopped: Bool {
        control.lock()
        defer { control.unlock() }
        return stopped
    }

    /// Waits until woken (or `milliseconds` pass, or the worker is stopped).
    private func waitForWork(milliseconds: Int64) {
        control.lock()
        if !woken && !stopped { _ = control.wait(until: Date(timeIntervalSinceNow: Double(milliseconds) / 1000)) }
        woken = false
        control.unlock()
    }

    /// Waits `milliseconds` unless stopped first; true when stopped.
    private func pause(milliseconds: Int64) -> Bool {
        let deadline = Date(timeIntervalSinceNow: Double(milliseconds) / 1000)
        control.lock()
        defer { control.unlock() }
        while !stopped && control.wait(until: deadline) {}
        return stopped
    }

    // MARK: Following the feed

    private func run(from start: HookCursor) {
        var cursor = start
        var saved = start
        var savedAt = settings.clock()
        defer {
            if cursor != saved { try? store.saveCursor(cursor, namespace, hook.name) }
            control.lock()
            finished = true
            control.broadcast()
            control.unlock()
        }
        while !isStopped {
            if redeliverParked() { return }
            let page: ChangeFeedPage
            switch read(after: cursor.readAfter) {
            case .success(let read): page = read
            case .failure(let error):
                status.withLock { $0.lastError = "reading the feed: \(error.message)" }
                waitForWork(milliseconds: 1000)
                continue
            }
            if page.needsResync(after: cursor.readAfter) {
                // Retention removed entries this hook had not delivered: said in the log, then on from what is left.
                record(DeliveryAttempt(
                    eventId: "-", attempt: 0, status: 0, latencyMilliseconds: 0,
                    excerpt: "entries after position \(cursor.readAfter) were removed by retention before they were delivered; continuing after \(page.trimmedThrough)",
                    time: settings.clock()))
                cursor = .after(page.trimmedThrough)
                continue
            }
            if page.entries.isEmpty {
                if cursor != saved {
                    try? store.saveCursor(cursor, namespace, hook.name)
                    saved = cursor
                    savedAt = settings.clock()
                }
                waitForWork(milliseconds: 5000)
                continue
            }
            for served in page.entries {
                var json: [UInt8] = []
                served.appendServed(to: &json)
                let events: [TriggerEvent]
                do { events = try FeedEntry(json: json).events(at: hook.pattern) } catch {
                    record(DeliveryAttempt(
                        eventId: "\(served.position)", attempt: 0, status: 0, latencyMilliseconds: 0,
                        excerpt: "the feed entry at \(served.position) could not be read (\(error.message)); skipped", time: settings.clock()))
                    cursor = .after(served.position)
                    continue
                }
                for (index, event) in events.enumerated() where cursor.isDue(served.position, index: index) && hook.events.contains(event.kind) {
                    let next = HookCursor(position: served.position, nextIndex: index + 1)
                    switch deliver(event, cursorAfter: next) {
                    case .stopped: return
                    case .delivered: cursor = next
                    case .parked:
                        cursor = next
                        saved = next
                        savedAt = settings.clock()
                    }
                }
                cursor = .after(served.position)
                status.withLock { $0.cursor = cursor }
                if settings.clock() - savedAt >= Self.cursorSaveMilliseconds {
                    try? store.saveCursor(cursor, namespace, hook.name)
                    saved = cursor
                    savedAt = settings.clock()
                }
            }
        }
    }

    private func read(after position: Int64) -> Result<ChangeFeedPage, StorageError> {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<Result<ChangeFeedPage, StorageError>?>(nil)
        host.readFeed(namespace: namespace, after: position, limit: Self.pageEntries) { page in
            result.withLock { $0 = page }
            done.signal()
        }
        // Bounded: a server that stopped its loop never answers.
        guard done.wait(timeout: .now() + 30) == .success else { return .failure(StorageError(.io, "the feed did not answer within 30 s")) }
        return result.withLock { $0 } ?? .failure(StorageError(.io, "no answer"))
    }

    // MARK: Delivering

    enum Outcome { case delivered, parked, stopped }

    /// Delivers `event` until it succeeds or its attempts run out (then parks it, with the cursor at
    /// `cursorAfter`, in one transaction).
    private func deliver(_ event: TriggerEvent, cursorAfter: HookCursor) -> Outcome {
        let body = HookDelivery.body(of: event, hook: hook.name, namespace: namespace)
        let (delivered, attempts, error) = attempt(body, eventId: event.id)
        if delivered { return .delivered }
        if isStopped && attempts < hook.attempts { return .stopped }
        let letter = DeadLetter(hook: hook.name, eventId: event.id, position: event.position, body: body, attempts: attempts, error: error, parkedAt: settings.clock())
        do { try store.park(letter, cursor: cursorAfter, namespace, hook.name) } catch {
            settings.log("hearth: hook '\(hook.name)' of '\(namespace)' could not park event \(event.id): \(error); it will be delivered again")
            return .stopped
        }
        settings.log("hearth: hook '\(hook.name)' of '\(namespace)': event \(event.id) parked as a dead letter after \(attempts) attempts (\(error))")
        return .parked
    }

    /// Tries `body` up to the hook's attempts; whether it was delivered, how many tries, the last error.
    private func attempt(_ body: [UInt8], eventId: String) -> (Bool, Int, String) {
        var lastError = ""
        for attempt in 1...hook.attempts {
            let result = post(body, eventId: eventId, attempt: attempt)
            record(result)
            if result.succeeded {
                status.withLock { status in
                    status.delivered += 1
                    status.failures = 0
                    status.lastError = nil
                }
                return (true, attempt, "")
            }
            lastError = result.status == 0 ? result.excerpt : "HTTP \(result.status): \(result.excerpt)"
            status.withLock { status in
                status.failures = attempt
                status.lastError = lastError
            }
            if attempt == hook.attempts { break }
            let wait = settings.schedule.delay(afterFailures: attempt, random: Double.random(in: 0..<1))
            if pause(milliseconds: wait) { return (false, attempt, lastError) }
        }
        return (false, hook.attempts, lastError)
    }

    /// One signed POST, bounded by the hook's timeout and the server's address policy.
    private func post(_ body: [UInt8], eventId: String, attempt: Int) -> DeliveryAttempt {
        let now = settings.clock()
        let signature = HookDelivery.signature(body: body, secret: hook.secret, unixSeconds: now / 1000) { key, message in
            HMACSHA256.authenticate(message, key: key)
        }
        let request = OutboundRequest(
            url: hook.url, method: "POST",
            headers: [("Content-Type", "application/json"), ("Hearth-Signature", signature), ("Hearth-Event-Id", eventId)], body: body)
        let fetcher = HTTPFetcher(
            limits: OutboundLimits(connectSeconds: min(5, hook.timeoutSeconds), totalSeconds: hook.timeoutSeconds, responseBytesMax: 1 << 20),
            userAgent: "Hearth-Hooks/1", addresses: settings.addresses)
        let started = DispatchTime.now().uptimeNanoseconds
        var status = 0
        var excerpt: String
        do {
            let response = try fetcher.fetch(request)
            status = response.status
            excerpt = String(decoding: response.body.prefix(Self.excerptBytes), as: UTF8.self)
        } catch {
            excerpt = error.description
        }
        let latency = Int64((DispatchTime.now().uptimeNanoseconds - started) / 1_000_000)
        return DeliveryAttempt(eventId: eventId, attempt: attempt, status: status, latencyMilliseconds: latency, excerpt: excerpt, time: now)
    }

    static let excerptBytes = 200

    private func record(_ attempt: DeliveryAttempt) {
        do { try store.log(attempt, namespace, hook.name) } catch {
            settings.log("hearth: hook '\(hook.name)' of '\(namespace)': the delivery log could not be written: \(error)")
        }
    }

    /// Delivers the dead letters an admin asked to redeliver, each with the hook's attempts; those that
    /// fail again are parked again. True when stopped meanwhile.
    private func redeliverParked() -> Bool {
        guard let letters = try? store.redeliveries(namespace, hook.name), !letters.isEmpty else { return false }
        for letter in letters {
            let (delivered, attempts, error) = attempt(letter.body, eventId: letter.eventId)
            if delivered {
                try? store.removeDeadLetter(namespace, hook.name, eventId: letter.eventId)
                continue
            }
            if isStopped { return true }
            var again = letter
            again.attempts = attempts
            again.error = error
            again.parkedAt = settings.clock()
            try? store.park(again, cursor: nil, namespace, hook.name)
        }
        return isStopped
    }
}

/// What a hook's worker shows (`/.settings/hooks/status.json`, the console).
struct HookStatus: Sendable {
    var cursor: HookCursor
    /// Events delivered since the server started.
    var delivered = 0
    /// Failed attempts at the event under way (0: none failing).
    var failures = 0
    var lastError: String?
}

