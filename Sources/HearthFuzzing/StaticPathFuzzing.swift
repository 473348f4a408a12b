import Foundation
import HearthProtocol
import HearthServer

/// Request paths as `hearth serve --public` reads them: whatever a client puts in a GET, percent-decoded.
/// Property: no path answers with the secret kept beside the public directory (reached with `..`,
/// encoded dots, links or hidden names) or in the data directory inside it, and nothing crashes.
///
/// Input: the request path.
enum StaticPathFuzzing {
    static let target = FuzzTarget(name: "static-path", input: "a request path", run: run)

    static let secret = Array("outside-the-public-directory".utf8)

    /// One site for the whole run: `<tmp>/hearth-fuzz-site/public` with an index and a link out, and a
    /// secret file beside `public`.
    static let site: StaticSite? = {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-fuzz-site-\(getpid())")
        let public_ = base.appendingPathComponent("public")
        try? FileManager.default.createDirectory(at: public_.appendingPathComponent("docs"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: public_.appendingPathComponent("index.html").path, contents: Data("<h1>hi</h1>".utf8))
        _ = FileManager.default.createFile(atPath: public_.appendingPathComponent(".env").path, contents: Data(secret))
        _ = FileManager.default.createFile(atPath: base.appendingPathComponent("secret.txt").path, contents: Data(secret))
        // A data directory inside the site, as with `hearth serve --public .`: excluded.
        try? FileManager.default.createDirectory(at: public_.appendingPathComponent("hearth-data"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: public_.appendingPathComponent("hearth-data/admin-token").path, contents: Data(secret))
        try? FileManager.default.createSymbolicLink(
            atPath: public_.appendingPathComponent("link").path, withDestinationPath: base.appendingPathComponent("secret.txt").path)
        return StaticSite(directory: public_.path, excluding: [public_.appendingPathComponent("hearth-data").path])
    }()

    static func run(_ bytes: [UInt8]) {
        guard let site else { return }
        let path = String(decoding: bytes, as: UTF8.self)
        let response = site.response(to: HTTPRequest(method: .get, path: path, queryItems: []))
        fuzzCheck(!contains(response.body, secret), "the path \(path.debugDescription) served a file outside the site")
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }
}
