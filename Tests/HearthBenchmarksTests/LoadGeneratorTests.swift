import Testing

@testable import HearthBenchmarks

@Test("Latency buckets hold their lower bound and stay within 1/32 of any value")
func latencyBucketsAreLogLinear() {
    for value in [0, 1, 63, 64, 65, 100, 1000, 1999, 123_456, 10_000_000] {
        let bucket = LatencyHistogram.bucket(of: value)
        let lower = LatencyHistogram.lowerBound(of: bucket)
        #expect(lower <= value)
        #expect(Double(value - lower) <= Double(max(1, value)) / 32, "value \(value) bucket \(bucket) lower \(lower)")
        #expect(LatencyHistogram.bucket(of: lower) == bucket)
    }
}

@Test("Histogram percentiles, merging and the one-line encoding a worker sends")
func histogramPercentilesMergeAndRoundTrip() throws {
    var first = LatencyHistogram()
    for microseconds in 1...100 { first.record(microseconds: microseconds * 10) }
    var second = LatencyHistogram()
    second.record(microseconds: 50_000)
    let decoded = try #require(LatencyHistogram(encoded: Substring(first.encoded)))
    #expect(decoded == first)
    #expect(LatencyHistogram(encoded: "-") == LatencyHistogram())
    #expect(LatencyHistogram(encoded: "x:1") == nil)
    var merged = decoded
    merged.merge(second)
    #expect(merged.total == 101)
    let p50 = try #require(first.percentileMilliseconds(0.5))
    #expect(p50 > 0.48 && p50 <= 0.51)
    #expect(try #require(merged.percentileMilliseconds(1)) > 48)
    #expect(LatencyHistogram().percentileMilliseconds(0.5) == nil)
}

@Test("A stamped value is exactly its length and gives its send time back")
func stampedValuesRoundTrip() {
    let value = LoadWire.stampedValue(1_234_567_890_123, length: 100)
    #expect(value.count == 100)
    let message = Array(#"{"t":"d","d":{"a":"d","b":{"p":"fan","d":""#.utf8) + value + Array(#""}}}"#.utf8)
    #expect(message.withUnsafeBytes { LoadWire.stamp(in: $0) } == 1_234_567_890_123)
    #expect(Array("no ~stamp~ here ~12".utf8).withUnsafeBytes { LoadWire.stamp(in: $0) } == nil)
}

@Test("Client frames are masked and unmask to the request")
func clientFramesAreMasked() {
    let frame = LoadWire.listenRequest(7, path: "/fan")
    #expect(frame[0] == 0x81)
    #expect(frame[1] & 0x80 != 0)
    let length = Int(frame[1] & 0x7F)
    let key = Array(frame[2..<6])
    let payload = frame[6...].enumerated().map { $0.element ^ key[$0.offset & 3] }
    #expect(payload.count == length)
    #expect(String(decoding: payload, as: UTF8.self) == #"{"t":"d","d":{"r":7,"a":"q","b":{"p":"/fan","h":""}}}"#)
    let long = LoadWire.putRequest(8, path: "/w/1", value: LoadWire.stampedValue(1, length: 200))
    #expect(long[1] == 0x80 | 126)
    #expect(Int(long[2]) << 8 | Int(long[3]) == long.count - 8)
}

@Test("Server frames and RESP values are found whole or not at all")
func framesAndRESPValuesNeedAllTheirBytes() {
    let frame: [UInt8] = [0x81, 3] + Array("abc".utf8) + [0x81]
    frame.withUnsafeBytes { bytes in
        let found = LoadWire.serverFrame(in: bytes)
        #expect(found?.payload == 2..<5)
        #expect(found?.length == 5)
        #expect(LoadWire.serverFrame(in: UnsafeRawBufferPointer(rebasing: bytes[..<4])) == nil)
    }
    let message = Array("*3\r\n$7\r\nmessage\r\n$3\r\nfan\r\n$5\r\nhello\r\n:1\r\n".utf8)
    message.withUnsafeBytes { bytes in
        #expect(LoadWire.respValueLength(in: bytes) == message.count - 4)
        #expect(LoadWire.respValueLength(in: bytes, from: message.count - 4) == 4)
        #expect(LoadWire.respValueLength(in: UnsafeRawBufferPointer(rebasing: bytes[..<30])) == nil)
    }
    #expect(LoadWire.command("SUBSCRIBE", "fan") == Array("*2\r\n$9\r\nSUBSCRIBE\r\n$3\r\nfan\r\n".utf8))
}

@Test("Realtime messages are told apart by their start")
func realtimeMessagesAreClassified() {
    func kind(_ text: String) -> LoadWire.RealtimeMessage { Array(text.utf8).withUnsafeBytes { LoadWire.classify(realtime: $0) } }
    #expect(kind(#"{"t":"c","d":{"t":"h","d":{"ts":1,"v":"5","h":"x","s":"y"}}}"#) == .handshake)
    #expect(kind(#"{"t":"d","d":{"r":2,"b":{"s":"ok","d":""}}}"#) == .ok)
    #expect(kind(#"{"t":"d","d":{"r":2,"b":{"s":"permission_denied","d":"no"}}}"#) == .failed)
    #expect(kind(#"{"t":"d","d":{"a":"d","b":{"p":"fan","d":1}}}"#) == .push)
}

@Test("Worker options survive the command line")
func workerOptionsRoundTrip() throws {
    var options = LoadWorkerOptions()
    options.wire = .redis
    options.port = 6379
    options.connections = 12
    options.role = "writer"
    options.path = "w"
    options.first = 30
    options.source = 0x7F00_000B
    let parsed = try LoadWorkerOptions(arguments: options.arguments)
    #expect(parsed == options)
    #expect(parsed.path(of: 2) == "w:32")
    #expect(throws: LoadLoop.Failure.self) { try LoadWorkerOptions(arguments: ["--port", "1"]) }
}
