internal import CLibPQ
#if canImport(Glibc)
    import Glibc
#endif

/// One libpq connection in non-blocking mode, where every wait for the socket is bounded by a deadline:
/// a PostgreSQL that stops answering (a dropped network, a stopped host) costs at most the deadline,
/// never a hang. Owned by the thread that opened it (the storage thread, or the one `load` or `backup`
/// call), which alone may use it: asserted in debug builds. A pool (`PostgresDatabase`) hands its
/// connections to one thread at a time, which takes ownership with `adopt()`.
///
///     let connection = try PostgresConnection(endpoint, deadline: .now + PostgresTimeouts.connect)
///     let results = try connection.run([PostgresStatement("SELECT 1")], deadline: .within(.seconds(5)))
final class PostgresConnection {
    /// The connection; nil once closed. Freed by `close()` (PQfinish), also on a failed connect.
    private var handle: OpaquePointer?
    let endpoint: PostgresEndpoint
    /// The thread that may use the connection. Changed only by `adopt()`, by a thread that took the
    /// connection from a pool under the pool's lock, after the previous owner put it back under that lock.
    private var owner = pthread_self()

    /// Connects, bounded by `deadline` (libpq's own `connect_timeout` is not used: it applies only to
    /// blocking connects, and per host).
    init(_ endpoint: PostgresEndpoint, deadline: ContinuousClock.Instant) throws(PostgresError) {
        self.endpoint = endpoint
        // Later keywords override the URL's (expand_dbname = 1 reads `dbname` as the URL): the engine
        // needs UTF-8 messages; the application name is only a default.
        let keywords = ["dbname", "fallback_application_name", "client_encoding"]
        let values = [endpoint.url, "hearth", "UTF8"]
        let handle = Self.withCStrings(keywords) { keywordPointers in
            Self.withCStrings(values) { valuePointers in PQconnectStartParams(keywordPointers, valuePointers, 1) }
        }
        guard let handle else { throw PostgresError(.connect, "libpq could not allocate a connection (out of memory)") }
        self.handle = handle
        do throws(PostgresError) {
            guard PQstatus(handle) != CONNECTION_BAD else { throw PostgresError(.connect, errorMessage) }
            // The documented PQconnectPoll loop: start as if it had asked to write, then wait for what
            // it asks for. The socket can change between calls (another host, another address).
            var polling = PGRES_POLLING_WRITING
            while polling != PGRES_POLLING_OK {
                switch polling {
                case PGRES_POLLING_FAILED: throw PostgresError(.connect, errorMessage)
                case PGRES_POLLING_READING: _ = try wait(reading: true, writing: false, until: deadline, connecting: true)
                default: _ = try wait(reading: false, writing: true, until: deadline, connecting: true)
                }
                polling = PQconnectPoll(handle)
            }
            guard PQsetnonblocking(handle, 1) == 0 else { throw PostgresError(.connect, errorMessage) }
            // libpq prints notices (`relation already exists, skipping`) to stderr by default.
            PQsetNoticeProcessor(handle, { _, _ in }, nil)
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Makes the calling thread the owner: called by a pool as it hands the connection over.
    func adopt() { owner = pthread_self() }

    /// Whether the connection still looks open, asked without waiting before an idle connection is used
    /// again: a PostgreSQL that restarted or ended the session (an administrator's command, an idle
    /// timeout) has sent its goodbye and closed the socket, which libpq learns only by reading it.
    var isOpen: Bool {
        let handle = connection
        // A goodbye (an error message, then the end of the stream) can take two reads to reach the end.
        for _ in 0..<3 {
            guard PQstatus(handle) == CONNECTION_OK else { return false }
            let socket = PQsocket(handle)
            guard socket >= 0 else { return false }
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 0)
            if ready < 0 { return errno == EINTR }
            if ready == 0 { return true }  // nothing to read: as open as can be told without a round trip
            if Int32(descriptor.revents) & (POLLERR | POLLHUP | POLLNVAL) != 0 { return false }
            // Reads what came and parses it (PQisBusy): a message outside a query is taken as a notice.
            guard PQconsumeInput(handle) == 1, PQisBusy(handle) == 0 else { return false }
        }
        return PQstatus(handle) == CONNECTION_OK
    }

    func close() {
        guard let handle else { return }
        PQfinish(handle)
        self.handle = nil
    }

    private var connection: OpaquePointer {
        assert(pthread_equal(owner, pthread_self()) != 0, "a PostgreSQL connection used off the thread that owns it")
        guard let handle else { preconditionFailure("a PostgreSQL connection used after close") }
        return handle
    }

    /// libpq's last message, one line: libpq puts its hints on lines of their own ("connection … failed:
    /// Connection refused\n\tIs the server running on that host…"), which would break a log line.
    private var errorMessage: String {
        guard let handle, let message = PQerrorMessage(handle) else { return "unknown error" }
        let text = String(cString: message).split(whereSeparator: \.isNewline)
            .map { String($0.drop(while: \.isWhitespace)).trimmingTrailingWhitespace }.filter { !$0.isEmpty }.joined(separator: " ")
        return text.isEmpty ? "unknown error" : text
    }

    // MARK: Statements

    /// Runs `statements` in one pipeline (libpq pipeline mode: sent together, one round trip) as one
    /// implicit transaction: PostgreSQL commits them together at the pipeline's sync, or rolls back all
    /// of them when one fails ("If the pipeline used an implicit transaction, then operations that have
    /// already executed are rolled back", libpq, Pipeline Mode). Returns each statement's result.
    ///
    /// - Throws: `.server` when PostgreSQL refused a statement (nothing was committed, the connection is
    ///   usable); `.connectionLost` or `.timedOut` when the connection is gone (the caller closes it;
    ///   whether a sent commit landed is unknown).
    func run(_ statements: [PostgresStatement], deadline: PostgresDeadline) throws(PostgresError) -> [PostgresResult] {
        // Checked before anything is sent, so a refusal leaves the connection as it was.
        for statement in statements { try Self.checkSize(of: statement) }
        let pipeline = try Pipeline(self, deadline: deadline)
        for statement in statements { try pipeline.send(statement) }
        return try pipeline.finish()
    }

    /// Statements sent one after another without waiting, and their results read at the end: for
    /// callers that produce statements as they go (an import walks its tree while earlier chunks are on
    /// their way), flushing each so that libpq's buffer never holds more than one.
    final class Pipeline {
        private let connection: PostgresConnection
        private let deadline: PostgresDeadline
        private var sent = 0

        init(_ connection: PostgresConnection, deadline: PostgresDeadline) throws(PostgresError) {
            self.connection = connection
            self.deadline = deadline
            guard PQenterPipelineMode(connection.connection) == 1 else { throw connection.lost() }
        }

        /// Sends `statement`. A value over PostgreSQL's size limit is refused before anything is sent when
        /// it is the first statement; later ones are kept below it by their makers (`RecordColumns`).
        func send(_ statement: PostgresStatement) throws(PostgresError) {
            if sent == 0 { try PostgresConnection.checkSize(of: statement) }
            try connection.send(statement)
            sent += 1
            try connection.flush(deadline: deadline)
        }

        /// Sends the sync and reads every result. A failed statement is thrown after the pipeline is read
        /// to its end, so the connection can be used again.
        func finish() throws(PostgresError) -> [PostgresResult] {
            let handle = connection.connection
            guard PQpipelineSync(handle) == 1 else { throw connection.lost() }
            try connection.flush(deadline: deadline)
            var results: [PostgresResult] = []
            var failure: PostgresError?
            for _ in 0..<sent {
                // Each statement's results end with a nil result.
                while let result = try connection.nextResult(deadline: deadline) {
                    switch PQresultStatus(result.handle) {
                    case PGRES_COMMAND_OK, PGRES_TUPLES_OK: results.append(result)
                    case PGRES_PIPELINE_ABORTED: break  // skipped after an earlier failure
                    default: failure = failure ?? connection.failure(of: result)
                    }
                }
            }
            guard let sync = try connection.nextResult(deadline: deadline), PQresultStatus(sync.handle) == PGRES_PIPELINE_SYNC else {
                throw failure ?? connection.lost()
            }
            guard PQexitPipelineMode(handle) == 1 else { throw connection.lost() }
            if let failure { throw failure }
            return results
        }
    }

    /// Runs one statement outside any pipeline or transaction block (VACUUM refuses both) and returns
    /// its result.
    func execute(_ statement: PostgresStatement, deadline: PostgresDeadline) throws(PostgresError) -> PostgresResult? {
        try send(statement)
        try flush(deadline: deadline)
        var last: PostgresResult?
        var failure: PostgresError?
        while let result = try nextResult(deadline: deadline) {
            switch PQresultStatus(result.handle) {
            case PGRES_COMMAND_OK, PGRES_TUPLES_OK: last = result
            default: failure = failure ?? self.failure(of: result)
            }
        }
        if let failure { throw failure }
        return last
    }

    /// Runs a query and hands each row to `row` as it arrives (libpq single-row mode), so a table of
    /// millions of rows is never held whole. A `row` that throws stops the scan; the connection must
    /// then be closed (its remaining rows are unread).
    func stream(
        _ statement: PostgresStatement, deadline: PostgresDeadline, row: (PostgresRow) throws(PostgresStreamError) -> Void
    ) throws(PostgresStreamError) {
        do throws(PostgresError) {
            try send(statement)
            guard PQsetSingleRowMode(connection) == 1 else { throw lost() }
            try flush(deadline: deadline)
        } catch { throw .postgres(error) }
        var failure: PostgresError?
        while true {
            let next: PostgresResult?
            do { next = try nextResult(deadline: deadline) } catch { throw .postgres(error) }
            guard let result = next else { break }
            switch PQresultStatus(result.handle) {
            case PGRES_SINGLE_TUPLE: if failure == nil { try row(PostgresRow(result: result, index: 0)) }
            case PGRES_TUPLES_OK: break  // the end: zero rows
            default: failure = failure ?? self.failure(of: result)
            }
        }
        if let failure { throw .postgres(failure) }
    }

    /// PostgreSQL's largest value (MaxAllocSize, 1 GB less a byte): a larger parameter fails on the
    /// server, so it is refused here first, with a message that says why.
    static let valueByteCountMax = (1 << 30) - 1

    static func checkSize(of statement: PostgresStatement) throws(PostgresError) {
        for parameter in statement.parameters {
            if let count = parameter.bytes?.count, count > valueByteCountMax {
                throw PostgresError(.server(sqlState: "54000"), "a value of \(count >> 20) MB is larger than PostgreSQL takes (1 GB)")
            }
        }
    }

    // MARK: libpq calls

    private func send(_ statement: PostgresStatement) throws(PostgresError) {
        let handle = connection
        let count = statement.parameters.count
        // Every value in one buffer, so one pointer scope covers them all; libpq copies them into its
        // output buffer before PQsendQueryParams returns. One extra byte keeps the base address non-nil
        // for empty values (an empty string is not NULL).
        var storage: [UInt8] = []
        var offsets: [Int] = []
        var lengths: [Int32] = []
        for parameter in statement.parameters {
            offsets.append(storage.count)
            if let bytes = parameter.bytes {
                // Never over Int32 after checkSize; a value that still is breaks the pipeline half sent.
                guard let length = Int32(exactly: bytes.count) else { throw PostgresError(.connectionLost, "a value of \(bytes.count >> 20) MB is larger than PostgreSQL takes (1 GB)") }
                lengths.append(length)
                storage.append(contentsOf: bytes)
            } else {
                lengths.append(0)
            }
        }
        storage.append(0)
        let types = statement.parameters.map { Oid($0.type.rawValue) }
        let formats = [Int32](repeating: 1, count: count)
        let accepted = storage.withUnsafeBufferPointer { buffer -> Int32 in
            guard let start = buffer.baseAddress else { return 0 }  // never: `storage` holds at least one byte
            let base = UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self)
            let values: [UnsafePointer<CChar>?] = statement.parameters.indices.map { index in
                statement.parameters[index].bytes == nil ? nil : base + offsets[index]
            }
            return PQsendQueryParams(handle, statement.sql, Int32(count), types, values, lengths, formats, 1)
        }
        guard accepted == 1 else { throw lost() }
    }

    /// Writes what libpq has buffered, reading meanwhile so that a server blocked on sending results
    /// cannot deadlock with us (the libpq documentation's advice for non-blocking mode).
    private func flush(deadline: PostgresDeadline) throws(PostgresError) {
        let handle = connection
        while true {
            let status = PQflush(handle)
            if status == 0 { return }
            if status < 0 { throw lost() }
            let ready = try wait(reading: true, writing: true, until: deadline.limit())
            if ready.readable && PQconsumeInput(handle) == 0 { throw lost() }
        }
    }

    /// The next result, reading from the socket until libpq has one; nil at the end of a statement's
    /// results.
    private func nextResult(deadline: PostgresDeadline) throws(PostgresError) -> PostgresResult? {
        let handle = connection
        while PQisBusy(handle) == 1 {
            _ = try wait(reading: true, writing: false, until: deadline.limit())
            if PQconsumeInput(handle) == 0 { throw lost() }
        }
        guard let result = PQgetResult(handle) else { return nil }
        return PostgresResult(handle: result)
    }

    /// A failed result as an error: the server's SQLSTATE and message while the connection is good, a
    /// lost connection otherwise (libpq reports a broken socket as a result too).
    private func failure(of result: PostgresResult) -> PostgresError {
        guard PQstatus(connection) == CONNECTION_OK else { return lost() }
        let state = PQresultErrorField(result.handle, CLibPQ_diagnosticSQLState()).map { String(cString: $0) } ?? ""
        let message = PQresultErrorField(result.handle, CLibPQ_diagnosticMessagePrimary()).map { String(cString: $0) }
            ?? PQresultErrorMessage(result.handle).map { String(cString: $0).trimmingTrailingWhitespace } ?? "unknown error"
        let constraint = PQresultErrorField(result.handle, CLibPQ_diagnosticConstraintName()).map { String(cString: $0) }
        return PostgresError(.server(sqlState: state), message, constraint: constraint)
    }

    private func lost() -> PostgresError { PostgresError(.connectionLost, errorMessage) }

    // MARK: Notifications

    /// The notifications (LISTEN) that arrived by `limit`: waits for the socket until then when none has,
    /// and returns what came, possibly nothing.
    ///
    /// - Throws: `.connectionLost` when the connection broke.
    func notifications(waitingUntil limit: ContinuousClock.Instant, orUntil wake: WakeSignal? = nil) throws(PostgresError)
        -> [(channel: String, payload: String)]
    {
        let handle = connection
        var received = Self.drainNotifications(handle)
        if !received.isEmpty { return received }
        if let wake {
            // Its owner stopping: back at once, with nothing.
            guard try waitReadable(until: limit, orUntil: wake) else { return [] }
        } else {
            do {
                _ = try wait(reading: true, writing: false, until: limit)
            } catch where error.kind == .timedOut {
                return []
            }
        }
        if PQconsumeInput(handle) == 0 { throw lost() }
        received = Self.drainNotifications(handle)
        return received
    }

    /// Waits until the socket can be read (true), or `limit` passes or `wake` is signalled (false).
    private func waitReadable(until limit: ContinuousClock.Instant, orUntil wake: WakeSignal) throws(PostgresError) -> Bool {
        let socket = PQsocket(connection)
        guard socket >= 0 else { throw lost() }
        var descriptors = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)]
        while true {
            let remaining = ContinuousClock.now.duration(to: limit)
            guard remaining > .zero, !wake.isSignalled else { return false }
            let milliseconds = Int32(clamping: remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1)
            let ready = poll(&descriptors, 2, milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                throw PostgresError(.connectionLost, "poll: \(String(cString: strerror(errno)))")
            }
            // An error or hang-up counts as readable: libpq's next call reads it and reports it.
            if descriptors[0].revents != 0 { return true }
        }
    }

    private static func drainNotifications(_ handle: OpaquePointer) -> [(channel: String, payload: String)] {
        var received: [(channel: String, payload: String)] = []
        while let notification = PQnotifies(handle) {
            let channel = notification.pointee.relname.map { String(cString: $0) } ?? ""
            let payload = notification.pointee.extra.map { String(cString: $0) } ?? ""
            PQfreemem(notification)
            received.append((channel, payload))
        }
        return received
    }

    /// Waits until the socket can be read or written (as asked) or `limit` passes.
    private func wait(reading: Bool, writing: Bool, until limit: ContinuousClock.Instant, connecting: Bool = false) throws(PostgresError) -> (readable: Bool, writable: Bool) {
        let socket = PQsocket(connection)
        guard socket >= 0 else { throw connecting ? PostgresError(.connect, errorMessage) : lost() }
        var descriptor = pollfd(fd: socket, events: Int16((reading ? POLLIN : 0) | (writing ? POLLOUT : 0)), revents: 0)
        while true {
            let remaining = ContinuousClock.now.duration(to: limit)
            guard remaining > .zero else {
                throw connecting
                    ? PostgresError(.connect, "no connection within \(PostgresTimeouts.connect)")
                    : PostgresError(.timedOut, "PostgreSQL did not answer in time")
            }
            let milliseconds = Int32(clamping: remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                throw PostgresError(connecting ? .connect : .connectionLost, "poll: \(String(cString: strerror(errno)))")
            }
            if ready == 0 { continue }  // the deadline check above ends the wait
            // An error or hang-up counts as ready: libpq's next call reads it and reports it.
            let events = Int32(descriptor.revents)
            let broken = events & (POLLERR | POLLHUP | POLLNVAL) != 0
            return (broken || events & POLLIN != 0, broken || events & POLLOUT != 0)
        }
    }

    /// Calls `body` with the strings as a nil-terminated array of C strings, valid during the call.
    private static func withCStrings<Result>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> Result) -> Result {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
