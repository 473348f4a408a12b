import Foundation

/// Reading an emailed sign-in link, as FirebaseAuth does: the link the email carries
/// (`…/__/auth/action?mode=signIn&oobCode=…&apiKey=…&continueUrl=…`), or a link that wraps it in a `link`
/// parameter (a dynamic link, or an app's own redirect), or one whose `deep_link_id` is it.
enum EmailLink {
    /// The link's query parameters, and those of the link it wraps, if any.
    static func parameters(of link: String) -> [String: String] {
        var found: [String: String] = [:]
        var pending = [link]
        var seen = 0
        while let current = pending.popLast(), seen < 4 {
            seen += 1
            guard let components = URLComponents(string: current) else { continue }
            for item in components.queryItems ?? [] {
                guard let value = item.value else { continue }
                if item.name == "link" || item.name == "deep_link_id" {
                    pending.append(value)
                } else if found[item.name] == nil {
                    found[item.name] = value
                }
            }
        }
        return found
    }

    /// The one-time code of a sign-in link, or nil when `link` is not one.
    static func code(in link: String) -> String? {
        let parameters = parameters(of: link)
        guard parameters["mode"] == "signIn", let code = parameters["oobCode"], !code.isEmpty else { return nil }
        return code
    }
}
