import HearthCore
import HearthProtocol
import HearthServer
import HearthTesting

/// The REST API: a request's path, query and body as a client sends them, through the whole handler
/// (parameters, paths, queries, bodies, multi-path updates, conditional writes, streams).
///
/// Input: the first line is `METHOD /path?query` (query items split at `&` and `=`, as the transport
/// hands them over decoded), then a line of `name: value` headers separated by `|`, then the body.
enum RESTFuzzing {
    static let target = FuzzTarget(name: "rest", input: "METHOD /path?query, a line of headers, then the body", run: run)

    static func run(_ bytes: [UInt8]) {
        let (line, afterLine) = bytes.splitOnce(at: 10)
        let (headerLine, body) = Array(afterLine).splitOnce(at: 10)
        let (methodText, target) = Array(line).splitOnce(at: UInt8(ascii: " "))
        let method = HTTPRequest.Method(rawValue: String(decoding: methodText, as: UTF8.self)) ?? .get
        let (path, query) = Array(target).splitOnce(at: UInt8(ascii: "?"))
        var headers: [String: String] = [:]
        for field in headerLine.split(separator: UInt8(ascii: "|")) {
            let (name, value) = Array(field).splitOnce(at: UInt8(ascii: ":"))
            headers[String(decoding: name, as: UTF8.self).lowercased()] = String(decoding: value, as: UTF8.self)
        }
        let request = HTTPRequest(
            method: method, path: path.isEmpty ? "/" : String(decoding: path, as: UTF8.self),
            queryItems: Self.items(query), headers: headers, body: Array(body))
        let (server, pending) = makeFuzzServer()
        // Some data to read, query and overwrite.
        let seed = HTTPRequest(
            method: .put, path: "/a.json", queryItems: [("ns", "fuzz")], headers: ["authorization": "Bearer owner"],
            body: Array(#"{"b":{"c":1,"d":"x"},"e":[1,2,{"f":true}],"g":{".priority":2,".value":3}}"#.utf8))
        server.handle(seed, responder: RecordingResponder(limit: 1 << 20))
        pending.drain()
        for attempt in [request, Self.withNamespace(request)] {
            let responder = RecordingResponder(limit: 1 << 20)
            server.handle(attempt, responder: responder)
            pending.drain()
            if responder.response == nil, responder.streamStatus == nil, Self.readsOffTheLoop(attempt) {
                // Nothing of this input may run into the next: LeakSanitizer, which checks between inputs,
                // took a console file still being read for a leak.
                fuzzCheck(responder.waitForResponse(seconds: 10) != nil, "no answer from the console's files")
            }
            if let response = responder.response {
                fuzzCheck((200...599).contains(response.status), "status \(response.status)")
            }
        }
        server.close()
    }

    /// Whether the server answers `request` from another queue: the console's files are read off the loop
    /// (`StaticSite`), and answered through it after this call returns.
    static func readsOffTheLoop(_ request: HTTPRequest) -> Bool {
        request.path == "/console" || request.path.hasPrefix("/console/")
    }

    static func items(_ query: ArraySlice<UInt8>) -> [(name: String, value: String)] {
        query.split(separator: UInt8(ascii: "&")).map { item in
            let (name, value) = Array(item).splitOnce(at: UInt8(ascii: "="))
            return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
        }
    }

    /// The same request on the namespace the seed data is in.
    static func withNamespace(_ request: HTTPRequest) -> HTTPRequest {
        var request = request
        request.queryItems.removeAll { $0.name == "ns" }
        request.queryItems.append((name: "ns", value: "fuzz"))
        return request
    }
}
