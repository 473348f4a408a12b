import Foundation

/// Where a database lives: the host its connections go to, its namespace, and whether TLS is used.
///
/// `https://demo.firebaseio.com` names namespace `demo`; `http://localhost:9000?ns=demo` (Hearth, the
/// emulator) names it with `ns`. `useEmulator(withHost:port:)` keeps the namespace and replaces the
/// host, without TLS.
struct RepoInfo: Hashable, Sendable {
    /// `host` or `host:port`, as configured.
    var host: String
    var namespace: String
    var secure: Bool
    /// The host connections use: the configured one, or the one the server named in its handshake (§1.4).
    var internalHost: String

    init(host: String, namespace: String, secure: Bool) {
        self.host = host
        self.namespace = namespace
        self.secure = secure
        internalHost = host
    }

    /// Parses a database URL; nil when it names no host or no namespace.
    init?(databaseURL: String) {
        guard let components = URLComponents(string: databaseURL), let host = components.host, !host.isEmpty else {
            return nil
        }
        let scheme = components.scheme?.lowercased() ?? "https"
        guard ["http", "https", "ws", "wss"].contains(scheme) else { return nil }
        let hostAndPort = components.port.map { "\(host):\($0)" } ?? host
        var namespace = components.queryItems?.first { $0.name == "ns" }?.value
        if namespace == nil || namespace!.isEmpty {
            let labels = host.split(separator: ".")
            // `<ns>.firebaseio.com`, `<ns>.<region>.firebasedatabase.app`; a bare host has none.
            namespace = labels.count >= 3 ? String(labels[0]).lowercased() : nil
        }
        guard let namespace, !namespace.isEmpty else { return nil }
        self.init(host: hostAndPort, namespace: namespace, secure: scheme == "https" || scheme == "wss")
    }

    /// The same database through an emulator (or a local Hearth) at `host:port`, without TLS.
    func usingEmulator(host: String, port: Int) -> RepoInfo {
        RepoInfo(host: "\(host):\(port)", namespace: namespace, secure: false)
    }

    /// `http(s)://host`: what references' `url` starts with.
    var baseURL: String { (secure ? "https://" : "http://") + host }

    /// Whether the host alone names the namespace (`<ns>.firebaseio.com`): else URLs carry `?ns=`.
    var hostNamesNamespace: Bool {
        let labels = host.split(separator: ":")[0].split(separator: ".")
        return labels.count >= 3 && labels[0].lowercased() == namespace
    }

    /// The URL of `encodedPath` (keys percent-encoded, joined by `/`) in this database, as references'
    /// `url` gives it: `?ns=` when the host does not name the namespace, so that
    /// `reference(fromURL:)` reads it back.
    func url(ofEncodedPath encodedPath: String) -> String {
        baseURL + "/" + encodedPath + (hostNamesNamespace ? "" : "?ns=" + (namespace.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? namespace))
    }

    /// The realtime endpoint (§1.1): `ws(s)://<host>/.ws?v=5&ns=<ns>[&ls=<last session>]`.
    func connectionURL(lastSessionID: String?) -> URL? {
        var components = URLComponents()
        components.scheme = secure ? "wss" : "ws"
        let parts = internalHost.split(separator: ":", maxSplits: 1)
        components.host = String(parts[0])
        if parts.count == 2, let port = Int(parts[1]) { components.port = port }
        components.path = "/.ws"
        var items = [URLQueryItem(name: "v", value: "5"), URLQueryItem(name: "ns", value: namespace)]
        if let lastSessionID, !lastSessionID.isEmpty { items.append(URLQueryItem(name: "ls", value: lastSessionID)) }
        components.queryItems = items
        return components.url
    }
}
