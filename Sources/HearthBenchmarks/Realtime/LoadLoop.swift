import CEpoll
import HearthTesting
#if canImport(Glibc)
    import Glibc
#endif

/// One client connection of the load generator: a non-blocking socket and the steps from TCP connect to
/// "listening" (WebSocket upgrade, handshake, `auth`, listen `q`; or RESP `SUBSCRIBE`).
final class LoadConnection {
    enum Role {
        /// Listens to (subscribes to) `path` and counts what arrives.
        case listener
        /// Listens to `path` and writes to it (ws.writes); with Redis, `SET`s it.
        case writer
        /// Only writes to `path` (ws.fanout's writer); with Redis, `PUBLISH`es to it.
        case publisher
    }

    enum Phase: Equatable {
        case connecting, upgrading, subscribing, ready, closed
    }

    let index: Int
    let role: Role
    let path: String
    fileprivate(set) var fd: Int32 = -1
    fileprivate(set) var phase = Phase.closed
    fileprivate var input: [UInt8] = []
    fileprivate var pendingOutput: [UInt8] = []
    fileprivate var awaitingReplies = 0
    fileprivate var nextRequest = 1
    /// Send times of writes not yet acknowledged, oldest first (replies come in order on one connection).
    fileprivate var sendStamps: [Int64] = []
    fileprivate var sendStampsHead = 0
    /// The newest value's send time this connection has seen, initial data included.
    fileprivate(set) var lastStamp: Int64 = 0
    /// Writes sent and not yet acknowledged.
    var inFlight: Int { sendStamps.count - sendStampsHead }

    init(index: Int, role: Role, path: String) {
        self.index = index
        self.role = role
        self.path = path
    }
}

/// What a loop counted since the last ``LoadLoop/takeCounters()``.
struct LoadCounters {
    var delivered = 0
    /// recv calls that returned data: deliveries per read show how many messages the server sent at once.
    var reads = 0
    var acknowledged = 0
    var deliveryLatency = LatencyHistogram()
    var acknowledgementLatency = LatencyHistogram()
}

/// Many ``LoadConnection``s on one thread with epoll: each wake-up costs what became ready, not what is
/// open (the old poll(2) client scanned every socket per wake-up).
final class LoadLoop {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    let wire: LoadProtocol
    let port: Int
    let credential: String?
    private let epoll: Int32
    private var byFD: [LoadConnection?] = Array(repeating: nil, count: 1 << 16)
    private(set) var connections: [LoadConnection] = []
    private var readBuffer = [UInt8](repeating: 0, count: 256 * 1024)
    /// What one epoll_wait reports, allocated once.
    private var readyFDs = [Int32](repeating: 0, count: 1024)
    private var readyEvents = [UInt32](repeating: 0, count: 1024)
    private(set) var counters = LoadCounters()
    private(set) var readyCount = 0
    private(set) var closedCount = 0
    private(set) var lastError: String?
    /// Writes each writer keeps in flight once ``startWriting(window:)`` ran (0: not writing).
    private var writeWindow = 0
    /// Called with fds the loop does not own (a worker's command pipe).
    var external: (Int32) -> Void = { _ in }

    init(wire: LoadProtocol, port: Int, credential: String?) throws(Failure) {
        self.wire = wire
        self.port = port
        self.credential = credential
        epoll = cepoll_create()
        guard epoll >= 0 else { throw Failure("epoll_create1 failed: errno \(errno)") }
    }

    deinit {
        for connection in connections where connection.fd >= 0 { abort(connection) }
        close(epoll)
    }

    func watchExternal(_ fd: Int32) { _ = cepoll_add(epoll, fd, CEPOLL_IN) }

    func takeCounters() -> LoadCounters {
        defer { counters = LoadCounters() }
        return counters
    }

    /// Starts connecting a new connection from the loopback address `source` (host order).
    @discardableResult
    func open(role: LoadConnection.Role, path: String, source: UInt32?) throws(Failure) -> LoadConnection {
        let connection = LoadConnection(index: connections.count, role: role, path: path)
        connections.append(connection)
        try connect(connection, source: source)
        return connection
    }

    private func connect(_ connection: LoadConnection, source: UInt32?) throws(Failure) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket() failed: \(String(cString: strerror(errno))) (open-file limit?)") }
        guard Int(fd) < byFD.count else { throw Failure("fd \(fd) beyond the loop's table") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        if let source {
            // Port chosen at connect time, per destination: many more connections per source address.
            setsockopt(fd, Int32(IPPROTO_IP), CEPOLL_IP_BIND_ADDRESS_NO_PORT, &one, socklen_t(MemoryLayout<Int32>.size))
            var local = Loopback.address(port: 0, host: source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                close(fd)
                throw Failure("bind to source address failed: \(String(cString: strerror(errno)))")
            }
        }
        var address = Loopback.address(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 || errno == EINPROGRESS else {
            close(fd)
            throw Failure("connect() failed: \(String(cString: strerror(errno)))")
        }
        connection.fd = fd
        connection.phase = .connecting
        connection.input.removeAll(keepingCapacity: true)
        connection.pendingOutput.removeAll()
        connection.sendStamps.removeAll()
        connection.sendStampsHead = 0
        byFD[Int(fd)] = connection
        _ = cepoll_add(epoll, fd, CEPOLL_OUT)
    }

    /// Closes every connection at once, without a goodbye (RST, as a dropped network would); each comes
    /// back with ``reconnect(_:source:)``, and ``readyCount`` counts them back.
    func dropAll() {
        for connection in connections where connection.fd >= 0 { abort(connection) }
        readyCount = 0
        closedCount = 0
        lastError = nil
    }

    func reconnect(_ connection: LoadConnection, source: UInt32?) throws(Failure) {
        try connect(connection, source: source)
    }

    private func abort(_ connection: LoadConnection) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(connection.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        byFD[Int(connection.fd)] = nil
        close(connection.fd)
        connection.fd = -1
        connection.phase = .closed
    }

    private func fail(_ connection: LoadConnection, _ reason: String) {
        if lastError == nil { lastError = "connection \(connection.index): \(reason)" }
        if connection.phase == .ready { readyCount -= 1 }
        closedCount += 1
        abort(connection)
    }

    /// Waits up to `timeout` ms for sockets to become ready and handles them.
    func poll(timeout: Int32) {
        let count = Int(cepoll_wait(epoll, &readyFDs, &readyEvents, Int32(readyFDs.count), timeout))
        guard count > 0 else { return }
        let fds = readyFDs, events = readyEvents
        for slot in 0..<count {
            let fd = fds[slot]
            guard let connection = byFD[Int(fd)] else {
                external(fd)
                continue
            }
            if connection.phase == .connecting {
                finishConnect(connection)
                continue
            }
            if events[slot] & CEPOLL_OUT != 0 { flush(connection) }
            if events[slot] & (CEPOLL_IN | CEPOLL_ERR | CEPOLL_HUP) != 0, connection.fd == fd { readAvailable(connection) }
        }
    }

    private func finishConnect(_ connection: LoadConnection) {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(connection.fd, SOL_SOCKET, SO_ERROR, &error, &length)
        guard error == 0 else { return fail(connection, "connect: \(String(cString: strerror(error)))") }
        _ = cepoll_modify(epoll, connection.fd, CEPOLL_IN)
        switch (wire, connection.role) {
        case (.realtime, _):
            connection.phase = .upgrading
            send(connection, LoadWire.upgradeRequest(port: port))
        case (.redis, .listener):
            connection.phase = .subscribing
            send(connection, LoadWire.command("SUBSCRIBE", connection.path))
        case (.redis, _):
            becomeReady(connection)
        }
    }

    private func becomeReady(_ connection: LoadConnection) {
        connection.phase = .ready
        readyCount += 1
        if writeWindow > 0, connection.role != .listener { fillWindow(connection) }
    }

    // MARK: Writing

    func send(_ connection: LoadConnection, _ bytes: [UInt8]) {
        guard connection.fd >= 0 else { return }
        if !connection.pendingOutput.isEmpty {
            connection.pendingOutput += bytes
            return
        }
        let written = bytes.withUnsafeBytes { Glibc.send(connection.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if written == bytes.count { return }
        if written < 0, errno != EAGAIN, errno != EINTR { return fail(connection, "send: \(String(cString: strerror(errno)))") }
        connection.pendingOutput = Array(bytes[max(0, written)...])
        _ = cepoll_modify(epoll, connection.fd, CEPOLL_IN | CEPOLL_OUT)
    }

    private func flush(_ connection: LoadConnection) {
        guard !connection.pendingOutput.isEmpty else { return }
        let written = connection.pendingOutput.withUnsafeBytes { Glibc.send(connection.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if written < 0 {
            if errno != EAGAIN, errno != EINTR { fail(connection, "send: \(String(cString: strerror(errno)))") }
            return
        }
        connection.pendingOutput.removeFirst(written)
        if connection.pendingOutput.isEmpty { _ = cepoll_modify(epoll, connection.fd, CEPOLL_IN) }
    }

    /// Sends one write of a fresh stamped `valueLength`-byte value on `connection`.
    func write(_ connection: LoadConnection, valueLength: Int = 100) {
        let stamp = monotonicNanoseconds()
        let value = LoadWire.stampedValue(stamp, length: valueLength)
        connection.sendStamps.append(stamp)
        switch (wire, connection.role) {
        case (.realtime, _):
            connection.nextRequest += 1
            send(connection, LoadWire.putRequest(connection.nextRequest, path: connection.path, value: value))
        case (.redis, .publisher):
            send(connection, LoadWire.command([Array("PUBLISH".utf8), Array(connection.path.utf8), value]))
        case (.redis, _):
            send(connection, LoadWire.command([Array("SET".utf8), Array(connection.path.utf8), value]))
        }
    }

    /// Every ready writer keeps `window` writes in flight from now on (0 stops new writes).
    func startWriting(window: Int) {
        writeWindow = window
        for connection in connections where connection.phase == .ready && connection.role != .listener { fillWindow(connection) }
    }

    private func fillWindow(_ connection: LoadConnection) {
        while connection.inFlight < writeWindow { write(connection) }
    }

    // MARK: Reading

    private func readAvailable(_ connection: LoadConnection) {
        while connection.fd >= 0 {
            let count = readBuffer.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return fail(connection, "closed by the server") }
            if count > 0 { counters.reads += 1 }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { return }
                return fail(connection, "recv: \(String(cString: strerror(errno)))")
            }
            if connection.input.isEmpty, connection.phase != .upgrading {
                let consumed = readBuffer.withUnsafeBytes { process(connection, UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                if consumed < count, connection.fd >= 0 { connection.input += readBuffer[consumed..<count] }
            } else {
                connection.input += readBuffer[..<count]
                let consumed = connection.input.withUnsafeBytes { process(connection, $0) }
                if connection.fd >= 0 { connection.input.removeFirst(min(consumed, connection.input.count)) }
            }
            if count < readBuffer.count { return }
        }
    }

    /// Handles every whole message at the start of `bytes`; returns how many bytes they took.
    private func process(_ connection: LoadConnection, _ bytes: UnsafeRawBufferPointer) -> Int {
        var offset = 0
        if connection.phase == .upgrading {
            guard let end = headerEnd(bytes) else { return 0 }
            guard LoadWire.hasPrefix(bytes, "HTTP/1.1 101") else {
                fail(connection, "upgrade refused: \(String(decoding: bytes.prefix(40), as: UTF8.self))")
                return 0
            }
            offset = end
            connection.phase = .subscribing
            connection.awaitingReplies = -1  // the handshake comes first
        }
        while connection.fd >= 0, offset < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            switch wire {
            case .realtime:
                guard let frame = LoadWire.serverFrame(in: rest) else { return offset }
                handleRealtime(connection, UnsafeRawBufferPointer(rebasing: rest[frame.payload]), opcode: rest[0] & 0x0F)
                offset += frame.length
            case .redis:
                guard let length = LoadWire.respValueLength(in: rest) else { return offset }
                handleRedis(connection, UnsafeRawBufferPointer(rebasing: rest[..<length]))
                offset += length
            }
        }
        return offset
    }

    private func headerEnd(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index + 4
        }
        return nil
    }

    private func handleRealtime(_ connection: LoadConnection, _ payload: UnsafeRawBufferPointer, opcode: UInt8) {
        if opcode == 0x8 { return fail(connection, "close frame from the server") }
        guard opcode == 0x1 else { return }  // pings, continuation of split messages: not ours
        switch LoadWire.classify(realtime: payload) {
        case .handshake where connection.phase == .subscribing && connection.awaitingReplies == -1:
            var requests: [UInt8] = []
            connection.awaitingReplies = 0
            if let credential {
                connection.nextRequest += 1
                requests += LoadWire.authRequest(connection.nextRequest, credential: credential)
                connection.awaitingReplies += 1
            }
            if connection.role != .publisher {
                connection.nextRequest += 1
                requests += LoadWire.listenRequest(connection.nextRequest, path: connection.path)
                connection.awaitingReplies += 1
            }
            if connection.awaitingReplies == 0 { becomeReady(connection) } else { send(connection, requests) }
        case .ok where connection.phase == .subscribing:
            connection.awaitingReplies -= 1
            if connection.awaitingReplies == 0 { becomeReady(connection) }
        case .ok:
            acknowledge(connection)
        case .failed:
            fail(connection, "request refused: \(String(decoding: payload.prefix(120), as: UTF8.self))")
        case .push:
            delivered(connection, payload)
        case .handshake, .other:
            break
        }
    }

    private func handleRedis(_ connection: LoadConnection, _ value: UnsafeRawBufferPointer) {
        switch value.first {
        case UInt8(ascii: "-"):
            fail(connection, "Redis error: \(String(decoding: value.prefix(120), as: UTF8.self))")
        case UInt8(ascii: "*"):
            if connection.phase == .subscribing {
                if LoadWire.contains(value, "subscribe") { becomeReady(connection) }
            } else {
                delivered(connection, value)
            }
        default:  // +OK of SET, :N of PUBLISH
            if connection.phase == .ready { acknowledge(connection) }
        }
    }

    private func delivered(_ connection: LoadConnection, _ payload: UnsafeRawBufferPointer) {
        guard let stamp = LoadWire.stamp(in: payload) else { return }
        if stamp > connection.lastStamp { connection.lastStamp = stamp }
        guard connection.phase == .ready else { return }  // initial data is not a delivery of a write
        counters.delivered += 1
        counters.deliveryLatency.record(microseconds: Int((monotonicNanoseconds() - stamp) / 1000))
    }

    private func acknowledge(_ connection: LoadConnection) {
        guard connection.sendStampsHead < connection.sendStamps.count else { return }
        let stamp = connection.sendStamps[connection.sendStampsHead]
        connection.sendStampsHead += 1
        if connection.sendStampsHead > 1024 {
            connection.sendStamps.removeFirst(connection.sendStampsHead)
            connection.sendStampsHead = 0
        }
        counters.acknowledged += 1
        counters.acknowledgementLatency.record(microseconds: Int((monotonicNanoseconds() - stamp) / 1000))
        if writeWindow > 0, connection.role != .listener { fillWindow(connection) }
    }
}
