import HearthCore

/// What one webhook delivery POSTs (docs/functions.md, "Webhooks"): the event as JSON, and the
/// `Hearth-Signature` header that proves the server sent it.
///
///     {"id": "16384-0", "hook": "countVotes", "namespace": "demo", "position": 16384, "type": "created",
///      "path": "/jokes/j1", "params": {"jokeId": "j1"}, "before": null, "after": {…},
///      "auth": {"type": "app_user", "uid": "ada", "protocol": "realtime"}, "time": 1796477209243}
public enum HookDelivery {
    public static func body(of event: TriggerEvent, hook: String, namespace: String) -> [UInt8] {
        var out = "{\"id\":\(Node(event.id).json()),\"hook\":\(Node(hook).json()),\"namespace\":\(Node(namespace).json())"
        out += ",\"position\":\(event.position),\"type\":\"\(event.kind.rawValue)\",\"path\":\(Node(event.location.slashed).json())"
        var parameters = Node.empty
        for (name, value) in event.parameters.sorted(by: { $0.key < $1.key }) { parameters.setChild(ChildKey(name), to: Node(value)) }
        out += ",\"params\":\(parameters.isEmpty ? "{}" : parameters.json(.export))"
        out += ",\"before\":\(event.before.json(.export)),\"after\":\(event.after.json(.export))"
        if event.beforeOmitted { out += ",\"beforeOmitted\":true" }
        out += ",\"auth\":{\"type\":\(Node(event.authType).json())"
        if let uid = event.authId { out += ",\"uid\":\(Node(uid).json())" }
        out += ",\"protocol\":\(Node(event.channel).json())},\"time\":\(event.time)}"
        return Array(out.utf8)
    }

    /// `t=UNIX_SECONDS,v1=HEX`, HEX the HMAC-SHA256 under the hook's secret of `t.` and the body,
    /// computed by `hmac` (HearthCrypto's, supplied by whoever sends).
    public static func signature(body: [UInt8], secret: String, unixSeconds: Int64, hmac: (_ key: [UInt8], _ message: [UInt8]) -> [UInt8]) -> String {
        let signed = Array("\(unixSeconds).".utf8) + body
        let digest = hmac(Array(secret.utf8), signed)
        return "t=\(unixSeconds),v1=" + hex(digest)
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// When to try a failed delivery again: exponential from `firstMilliseconds`, capped, with jitter (a
/// random part of each wait, so receivers coming back are not hit by every retry at once).
public struct RetrySchedule: Sendable, Equatable {
    public var firstMilliseconds: Int64
    public var capMilliseconds: Int64

    public init(firstMilliseconds: Int64 = 500, capMilliseconds: Int64 = 30_000) {
        self.firstMilliseconds = firstMilliseconds
        self.capMilliseconds = capMilliseconds
    }

    /// The wait after the `failures`th failure (from 1): between half and all of
    /// min(cap, first × 2^(failures−1)); `random` gives a number in 0..<1.
    public func delay(afterFailures failures: Int, random: Double) -> Int64 {
        let exponent = min(max(failures - 1, 0), 30)
        let full = min(capMilliseconds, firstMilliseconds << Int64(exponent))
        let jitter = Int64(Double(full / 2) * min(max(random, 0), 1))
        return full / 2 + jitter
    }
}
