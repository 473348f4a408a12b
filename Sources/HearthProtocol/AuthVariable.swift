public import HearthCore

/// The rules' `auth` variable (`{"uid", "provider", "token": {claims}}`), and the parts of a compact
/// JWT: what the database server and Firebase Auth both read from ID tokens, written once.
public enum AuthVariable {
    public static func make(uid: String, provider: String, token claims: Node) -> Node {
        var auth = Node.empty
        auth.setChild(ChildKey("uid"), to: Node(uid))
        auth.setChild(ChildKey("provider"), to: Node(provider))
        auth.setChild(ChildKey("token"), to: claims)
        return auth
    }

    /// From an ID token's claims: `uid` from `sub` (or `user_id`), `provider` from
    /// `firebase.sign_in_provider` (`custom` when absent), `token` the claims themselves.
    public static func from(claims: Node) -> Node {
        let uid = claims.child(ChildKey("sub")).stringValue ?? claims.child(ChildKey("user_id")).stringValue ?? ""
        let provider = claims.child(at: Path("firebase/sign_in_provider")).stringValue ?? "custom"
        return make(uid: uid, provider: provider, token: claims)
    }
}

/// A compact JWT (`header.payload.signature`, base64url), read without checking anything.
public enum CompactJWT {
    /// The decoded bytes of segment `index` (0 header, 1 payload), or nil when the token is not three
    /// base64 segments.
    public static func segment(_ token: String, _ index: Int) -> [UInt8]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.indices.contains(index) else { return nil }
        return Base64.decode(parts[index].utf8)
    }

    /// The payload's claims as a tree, when it is a JSON object.
    public static func claims(_ token: String) -> Node? {
        guard let payload = segment(token, 1), let claims = try? Node(jsonBytes: payload), claims.hasChildren else { return nil }
        return claims
    }
}
