import Testing

@testable import HearthServer

struct StaticPathTests {
    @Test("Paths name files below the public directory, and nothing else")
    func segmentsStayInside() {
        #expect(StaticPath.segments(of: "/")?.segments == [])
        #expect(StaticPath.segments(of: "/")?.directoryIndex == true)
        #expect(StaticPath.segments(of: "/app/main.js")?.segments == ["app", "main.js"])
        #expect(StaticPath.segments(of: "/docs/")?.directoryIndex == true)
        for refused in ["/../etc/passwd", "/a/../../x", "/./a", "/.env", "/a/.git/config", "/a//b", "/a\\b", "/a\u{0}b", "relative"] {
            #expect(StaticPath.segments(of: refused) == nil, "\(refused)")
        }
    }

    @Test func contentTypesAndCaching() {
        #expect(StaticPath.contentType(of: "index.html") == "text/html; charset=utf-8")
        #expect(StaticPath.contentType(of: "app.MJS") == "text/javascript; charset=utf-8")
        #expect(StaticPath.contentType(of: "logo.svg") == "image/svg+xml; charset=utf-8")
        #expect(StaticPath.contentType(of: "font.woff2") == "font/woff2")
        #expect(StaticPath.contentType(of: "LICENSE") == "application/octet-stream")
        #expect(StaticPath.cacheControl(of: "index.html") == "no-cache")
        #expect(StaticPath.cacheControl(of: "app.js") == "public, max-age=3600")
    }
}
