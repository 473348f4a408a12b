import Foundation
import HearthClient
public import HearthFunctions

/// The social app's server-side logic (docs/examples.md): each profile's follower count, the number of
/// children of `followers/<uid>` after each write there (one location per user: its events run in
/// order, and setting the count, not adding to it, makes a repeated event harmless).
public enum SocialFunctions {
    public static func register(on functions: Functions) {
        functions.onValueWritten("/followers/{uid}", name: "countFollowers") { event in
            guard let uid = event.params["uid"] else { return }
            let count = Int(event.data.after.childrenCount)
            // Only on a profile that exists: a count alone would be a profile without a username.
            _ = try await event.database.reference(withPath: "users/\(uid)").runTransactionBlock { current in
                guard var profile = current.value as? [String: Any] else { return .success(withValue: current) }
                profile["followers"] = count
                current.value = profile
                return .success(withValue: current)
            }
        }
    }
}
