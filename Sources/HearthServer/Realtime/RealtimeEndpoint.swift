import HearthCore
public import HearthProtocol
import HearthWire

extension DatabaseServer: RealtimeHandler {
    public var webSocketPath: String { "/.ws" }

    public func openRealtime(_ request: HTTPRequest, sink: any RealtimeSink) -> any RealtimeSessionHandle {
        let host = request.headers["host"].flatMap { $0.isEmpty ? nil : $0 } ?? "localhost"
        let ns = request.queryItems.first { $0.name == Wire.namespaceParameter }?.value
        let namespaceName = (ns?.isEmpty == false ? ns : nil) ?? Self.namespace(fromHost: host)
            ?? configuration.defaultNamespace
        let session = RealtimeSession(id: subscriberIDs.next(), server: self, sink: sink, sessionID: Self.sessionID())
        if let upgrading = request.queryItems.first(where: { $0.name == Wire.transportSessionParameter })?.value, !upgrading.isEmpty {
            // A long-poll client upgrading its session (`s=`): refused with `r`, so it stays on long-poll
            // (§1.10); the socket is never a fresh session.
            _ = sink.sendMessage([WireEncoder.control(.reset, host)])
            session.machine.close(reason: "long-poll upgrade refused")
            sink.close(reason: "long-poll upgrade refused", immediately: false)
            return session
        }
        let frames = session.machine.open(timestamp: clock(), host: host, sessionID: session.sessionID)
        _ = sink.sendMessage(frames)
        let lastSession = request.queryItems.first(where: { $0.name == Wire.lastSessionParameter })?.value
        // A realtime connection has no credential yet: it may only open a namespace that exists.
        let attach = { (result: Result<Namespace, NamespaceUnavailable>) in
            switch result {
            case .success(let namespace):
                // `ls`: the client's previous connection, if still open, is closed and its onDisconnect runs (§1.4).
                if let last = lastSession, !last.isEmpty, let previous = namespace.listeners.session(handshakeID: last) {
                    previous.replaced()
                }
                session.attach(to: namespace)
            case .failure(let error):
                // A namespace that cannot be served is fatal for this client (§1.5 `s`).
                _ = sink.sendMessage([WireEncoder.control(.shutdown, error.message)])
                session.machine.close(reason: error.message)
                sink.close(reason: "namespace unavailable", immediately: false)
            }
        }
        if namespaces.mayOpen(namespaceName, isAdmin: false) {
            namespaces.withNamespace(namespaceName, attach)
        } else {
            attach(.failure(NamespaceRegistry.noSuchNamespace(namespaceName)))
        }
        return session
    }

    /// 32 URL-safe random characters (§1.4 `s`).
    static func sessionID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var generator = SystemRandomNumberGenerator()
        return String((0..<32).map { _ in alphabet[Int(generator.next() % 64)] })
    }

    // MARK: Realtime credentials (§2.3)

    /// Who `auth`/`gauth` with `credential` makes the connection, and the reply's `auth`/`expires` JSON.
    /// An admin credential with `authvar` acts as that user, with `noauth` as signed out.
    func realtimeAuthenticate(credential: String, authVariable: [UInt8]?, noAuth: Bool)
        -> Result<(Caller, auth: [UInt8], expires: [UInt8]), CredentialRefusal>
    {
        let null = Array("null".utf8)
        var override: Node?
        if noAuth {
            override = .empty
        } else if let authVariable {
            guard let parsed = try? Node(jsonBytes: authVariable) else {
                return .failure(.unparsable)
            }
            override = parsed
        }
        switch credentials.caller(credential: credential, authVariable: override) {
        case .failure(let failure):
            return .failure(failure)
        case .success(let caller):
            guard let auth = caller.auth else { return .success((caller, null, null)) }
            var expires = null
            if case .integer(let exp)? = auth.child(at: Path("token/exp")).leafValue { expires = Array(String(exp).utf8) }
            return .success((caller, Array(auth.json().utf8), expires))
        }
    }
}
