import Dispatch
import Foundation
public import HearthProtocol

/// `hearth serve --public DIR`: the files of a directory on the database's port, as `firebase serve`
/// serves a web app beside its database. GET and HEAD of any path that is not a data URL (`….json`) or
/// one of the server's own (`/.ws`, `/.lp`, `/.settings/…`, auth) are answered from the directory.
///
/// Files are read on `queue`, never on the event loop; the answer comes back through the loop's
/// executor. A name is refused before the disk is asked (``StaticPath``), and a file found through a
/// symbolic link is served only if it really lies inside the directory.
public final class StaticSite: Sendable {
    /// The directory, resolved (symbolic links followed), with a trailing `/`.
    public let root: String
    /// Directories inside `root` never served, resolved with a trailing `/`: the server's data directory
    /// (admin token, databases, accounts) when someone serves the directory that holds it.
    let excluded: [String]
    private let queue = DispatchQueue(label: "hearth.static", qos: .userInitiated, attributes: .concurrent)

    /// Nil when `directory` is not a readable directory. Files in `excluding` (directories, such as the
    /// data directory) are never served, even when they lie inside `directory`.
    public init?(directory: String, excluding: [String] = []) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue,
            let resolved = Self.resolve(directory)
        else { return nil }
        root = Self.slashed(resolved)
        excluded = excluding.compactMap(Self.resolve).map(Self.slashed)
    }

    /// Whether serving `directory` would serve all of `excluded` (it is the directory or inside it): then
    /// nothing could be served safely and `hearth serve` refuses to start.
    public static func lies(_ directory: String, inside other: String) -> Bool {
        guard let directory = resolve(directory), let other = resolve(other) else { return false }
        return slashed(directory).hasPrefix(slashed(other))
    }

    private static func slashed(_ path: String) -> String { path.hasSuffix("/") ? path : path + "/" }

    /// Whether `request` is the site's to answer.
    static func serves(_ request: HTTPRequest) -> Bool {
        (request.method == .get || request.method == .head) && !request.path.hasSuffix(".json") && !request.path.hasPrefix("/.")
    }

    /// Answers `request` from the directory, off the loop; `respond` runs on the loop.
    func answer(_ request: HTTPRequest, executor: (any LoopExecutor)?, responder: any HTTPResponder) {
        let box = ResponderHandoff(responder)
        guard let executor else { return responder.respond(response(to: request)) }
        queue.async { [self] in
            let response = response(to: request)
            executor.execute { box.responder.respond(response) }
        }
    }

    /// The response for `request`: the file, 304 when the client's copy is current, or 404 (the site's
    /// own `404.html` when it has one).
    public func response(to request: HTTPRequest) -> HTTPResponse {
        guard let (segments, directoryIndex) = StaticPath.segments(of: request.path) else { return notFound(request) }
        var path = root + segments.joined(separator: "/")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return notFound(request) }
        if isDirectory.boolValue || directoryIndex { path += (path.hasSuffix("/") ? "" : "/") + "index.html" }
        let file: File
        switch self.file(at: path) {
        case .found(let found): file = found
        case .missing: return notFound(request)
        case .tooLarge(let size):
            return HTTPResponse(
                status: 500, headers: [("content-type", "text/plain; charset=utf-8"), ("cache-control", "no-cache")],
                body: Array(("This file is \(size >> 20) MiB; hearth serve --public serves files up to "
                    + "\(ServerLimits.staticFileBytesMax >> 20) MiB. Serve large media from a CDN or nginx.\n").utf8))
        }
        if let expected = request.headers["if-none-match"], expected == file.etag {
            return HTTPResponse(status: 304, headers: headers(for: path, file: file))
        }
        return HTTPResponse(
            status: 200, headers: headers(for: path, file: file) + [("content-type", StaticPath.contentType(of: path))],
            body: file.bytes)
    }

    private struct File {
        let bytes: [UInt8]
        let etag: String
    }

    private enum Lookup {
        case found(File)
        case missing
        case tooLarge(Int)
    }

    /// The regular file at `path`, if it resolves inside the directory and is within the size limit.
    private func file(at path: String) -> Lookup {
        guard let resolved = Self.resolve(path), resolved.hasPrefix(root), !excluded.contains(where: { resolved.hasPrefix($0) }),
            let attributes = try? FileManager.default.attributesOfItem(atPath: resolved),
            attributes[.type] as? FileAttributeType == .typeRegular, let size = attributes[.size] as? Int
        else { return .missing }
        guard size <= ServerLimits.staticFileBytesMax else { return .tooLarge(size) }
        guard let data = FileManager.default.contents(atPath: resolved) else { return .missing }
        let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        let etag = "\"\(String(data.count, radix: 16))-\(String(Int64(modified * 1000), radix: 16))\""
        return .found(File(bytes: [UInt8](data), etag: etag))
    }

    private func headers(for path: String, file: File) -> [(String, String)] {
        [("etag", file.etag), ("cache-control", StaticPath.cacheControl(of: path)), ("x-content-type-options", "nosniff")]
    }

    private func notFound(_ request: HTTPRequest) -> HTTPResponse {
        if case .found(let page) = file(at: root + "404.html") {
            return HTTPResponse(
                status: 404, headers: [("content-type", "text/html; charset=utf-8"), ("cache-control", "no-cache")],
                body: page.bytes)
        }
        return HTTPResponse(
            status: 404, headers: [("content-type", "text/plain; charset=utf-8"), ("cache-control", "no-cache")],
            body: Array("Not found: no file \(request.path.prefix(200)) in the public directory\n".utf8))
    }

    /// The path with every symbolic link followed, or nil when it does not exist.
    private static func resolve(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
