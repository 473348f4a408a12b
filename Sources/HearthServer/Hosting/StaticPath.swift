/// Which file under the public directory a request path names, decided without touching the disk:
/// `/` and `/dir/` name `index.html` in them; dot segments (`..`, `.`), hidden names (`.env`, `.git`),
/// backslashes and NUL bytes name nothing, so no request reaches outside the directory or its hidden
/// files by name (symbolic links are checked by ``StaticSite`` once resolved).
enum StaticPath {
    /// The path's segments relative to the public directory, or nil when it names nothing servable.
    /// `directoryIndex` is true when the path ends in `/` (so `index.html` is appended).
    static func segments(of requestPath: String) -> (segments: [String], directoryIndex: Bool)? {
        guard requestPath.hasPrefix("/"), !requestPath.contains("\0"), !requestPath.contains("\\") else { return nil }
        let parts = requestPath.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        var segments: [String] = []
        for (index, part) in parts.enumerated() {
            if part.isEmpty {
                // `//` inside a path names nothing; a trailing `/` asks for the directory's index.
                guard index == parts.count - 1 else { return nil }
                continue
            }
            guard !part.hasPrefix(".") else { return nil }
            segments.append(String(part))
        }
        return (segments, requestPath.hasSuffix("/"))
    }

    /// The `Content-Type` for a file name, by its extension; text types say UTF-8.
    static func contentType(of name: String) -> String {
        let ext = name.split(separator: ".").last.map { $0.lowercased() } ?? ""
        switch ext {
        case "html", "htm": return "text/html; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "json", "map": return "application/json; charset=utf-8"
        case "webmanifest": return "application/manifest+json; charset=utf-8"
        case "txt": return "text/plain; charset=utf-8"
        case "xml": return "application/xml; charset=utf-8"
        case "svg": return "image/svg+xml; charset=utf-8"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "avif": return "image/avif"
        case "ico": return "image/x-icon"
        case "wasm": return "application/wasm"
        case "woff": return "font/woff"
        case "woff2": return "font/woff2"
        case "ttf": return "font/ttf"
        case "otf": return "font/otf"
        case "pdf": return "application/pdf"
        case "mp4": return "video/mp4"
        case "webm": return "video/webm"
        case "mp3": return "audio/mpeg"
        case "wav": return "audio/wav"
        default: return "application/octet-stream"
        }
    }

    /// How long browsers may reuse a file without asking: HTML is revalidated every time (a new
    /// deploy shows at once), everything else is kept an hour, as Firebase Hosting does by default.
    static func cacheControl(of name: String) -> String {
        contentType(of: name).hasPrefix("text/html") ? "no-cache" : "public, max-age=3600"
    }
}
