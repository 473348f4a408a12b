import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// PUTs sent on a schedule whether or not earlier ones were answered (an open loop), each on an idle
/// keep-alive connection (a new one when all are busy: hearth serve does not handle pipelined requests,
/// see docs/server.md), so a slow answer does not slow the write rate. Every answer must be a 204 (the
/// targets say `print=silent`).
final class OpenLoopWriter {
    private let port: Int
    private var writers: [Int32] = []
    private var outstanding: [Int] = []
    private var response = [UInt8](repeating: 0, count: 65536)

    init(port: Int) { self.port = port }

    deinit { for fd in writers { close(fd) } }

    /// Sends `PUT target` with `body` on an idle connection.
    func put(_ target: String, body: String) throws(ServerHarness.Failure) {
        try drainAnswers(wait: false)
        var index = outstanding.firstIndex(of: 0) ?? -1
        if index < 0 {
            let fd = ServerHarness.connectLoopback(port: port)
            guard fd >= 0, writers.count < 4_000 else { throw ServerHarness.Failure("cannot open another writer connection") }
            writers.append(fd)
            outstanding.append(0)
            index = writers.count - 1
        }
        let request = Array("PUT \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
        guard request.withUnsafeBytes({ Glibc.write(writers[index], $0.baseAddress, $0.count) }) == request.count else {
            throw ServerHarness.Failure("a writer's connection failed")
        }
        outstanding[index] += 1
    }

    /// Waits for every answer still outstanding.
    func finish() throws(ServerHarness.Failure) {
        while outstanding.contains(where: { $0 > 0 }) { try drainAnswers(wait: true) }
    }

    /// Reads whatever answers have arrived; each is a 204 head (print=silent) with no body.
    private func drainAnswers(wait: Bool) throws(ServerHarness.Failure) {
        var watched = writers.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        guard watched.withUnsafeMutableBufferPointer({ poll($0.baseAddress, nfds_t($0.count), wait ? 100 : 0) }) > 0 else { return }
        for index in watched.indices where watched[index].revents != 0 {
            let count = response.withUnsafeMutableBytes { recv(writers[index], $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else { throw ServerHarness.Failure("a writer's connection closed") }
            let text = String(decoding: response[..<count], as: UTF8.self)
            let answers = text.components(separatedBy: "HTTP/1.1 ").count - 1
            let noContent = text.components(separatedBy: "HTTP/1.1 204").count - 1
            guard answers == noContent else { throw ServerHarness.Failure("a PUT was answered \(text.prefix(60))") }
            outstanding[index] -= answers
        }
    }
}
