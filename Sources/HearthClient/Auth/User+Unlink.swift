import Foundation

extension User {
    /// Removes a sign-in method from this account (`password`, `phone`, or a provider's ID such as
    /// `google.com`) and returns the user. An account must keep one way to sign in: the server refuses
    /// to unlink what is not linked (`noSuchProvider`).
    @discardableResult
    public func unlink(fromProvider provider: String) async throws -> User {
        guard providerData.contains(where: { $0.providerID == provider }) else {
            throw AuthFailure.error(.noSuchProvider)
        }
        try await update(["deleteProvider": [provider]])
        return self
    }

    public func unlink(fromProvider provider: String, completion: ((User?, (any Error)?) -> Void)? = nil) {
        complete(completion) { try await self.unlink(fromProvider: provider) }
    }
}
