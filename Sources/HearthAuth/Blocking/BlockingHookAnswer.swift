import Foundation

/// What a blocking hook's answer asks to change, as a Firebase blocking function's return value:
/// the account's `displayName`, `photoURL`, `emailVerified`, `disabled` and `customClaims` (kept on
/// the account), and, before a sign-in, `sessionClaims` (in this session's ID tokens only).
public struct BlockingHookChanges: Equatable, Sendable {
    public var displayName: String?
    public var photoURL: String?
    public var emailVerified: Bool?
    public var disabled: Bool?
    /// A JSON object's text, checked as `setCustomUserClaims` checks it.
    public var customClaims: String?
    public var sessionClaims: String?

    public init() {}

    /// Whether anything kept on the account changes.
    public var changesAccount: Bool {
        displayName != nil || photoURL != nil || emailVerified != nil || disabled != nil || customClaims != nil
    }

    func apply(to user: inout UserRecord) {
        if let displayName { user.displayName = displayName }
        if let photoURL { user.photoUrl = photoURL }
        if let emailVerified { user.emailVerified = emailVerified }
        if let disabled { user.disabled = disabled }
        if let customClaims { user.customAttributes = customClaims }
    }
}

/// A blocking hook's answer, read from its HTTP status and body (a client of the server controls
/// neither, so this parser has a fuzz target): a 2xx lets the operation go ahead with the changes its
/// JSON object names (an empty body or `{}`: none); a 4xx refuses it, with the message of Firebase's
/// error shape `{"error": {"message", "status"}}`; anything else, or a 2xx whose body is not such an
/// object, is a failure, which the hook's `failOpen` decides.
public enum BlockingHookAnswer: Equatable, Sendable {
    case allow(BlockingHookChanges)
    case deny(message: String, status: String)
    case failed(reason: String)

    /// Characters of a refusal's message passed on to the client.
    public static let messageCharactersMax = 500

    public init(status: Int, body: [UInt8], event: BlockingHooks.Event) {
        switch status {
        case 200..<300: self = Self.changes(body, event: event)
        case 400..<500: self = Self.refusal(status: status, body: body)
        default: self = .failed(reason: "it answered HTTP \(status)")
        }
    }

    private static func changes(_ body: [UInt8], event: BlockingHooks.Event) -> BlockingHookAnswer {
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return .allow(BlockingHookChanges()) }
        guard let object = JSONText.object(body) else { return .failed(reason: "its answer is not a JSON object") }
        var changes = BlockingHookChanges()
        do throws(Malformed) {
            changes.displayName = try string(object, "displayName")
            changes.photoURL = try string(object, "photoURL")
            changes.emailVerified = try flag(object, "emailVerified")
            changes.disabled = try flag(object, "disabled")
            changes.customClaims = try claims(object, "customClaims")
            if event == .beforeSignIn {
                changes.sessionClaims = try claims(object, "sessionClaims")
            } else if object["sessionClaims"] != nil {
                throw Malformed("sessionClaims are for beforeSignIn only")
            }
        } catch {
            return .failed(reason: "its answer is malformed: \(error.reason)")
        }
        return .allow(changes)
    }

    private static func refusal(status: Int, body: [UInt8]) -> BlockingHookAnswer {
        let error = JSONText.object(body)?["error"] as? [String: Any]
        let message = (error?["message"] as? String).map { String($0.prefix(messageCharactersMax)) } ?? "HTTP \(status)"
        let statusName = (error?["status"] as? String).flatMap { name in
            !name.isEmpty && name.count <= 64 && name.allSatisfy({ $0.isASCII && ($0.isUppercase || $0 == "_") }) ? name : nil
        }
        return .deny(message: message, status: statusName ?? (status == 401 || status == 403 ? "PERMISSION_DENIED" : "INVALID_ARGUMENT"))
    }

    struct Malformed: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    private static func string(_ object: [String: Any], _ name: String) throws(Malformed) -> String? {
        guard let value = object[name] else { return nil }
        guard let text = value as? String, text.utf8.count <= 2048 else { throw Malformed("\(name) must be a string of at most 2048 bytes") }
        return text
    }

    private static func flag(_ object: [String: Any], _ name: String) throws(Malformed) -> Bool? {
        guard let value = object[name] else { return nil }
        guard let number = value as? NSNumber, String(cString: number.objCType) == "c" || String(cString: number.objCType) == "B" else {
            throw Malformed("\(name) must be true or false")
        }
        return number.boolValue
    }

    private static func claims(_ object: [String: Any], _ name: String) throws(Malformed) -> String? {
        guard let value = object[name] else { return nil }
        guard let claims = value as? [String: Any] else { throw Malformed("\(name) must be an object") }
        let text = JSONText.encode(claims, sorted: true)
        do { try AuthService.validateCustomAttributes(text) } catch { throw Malformed("\(name): \(error.message)") }
        return text
    }
}
