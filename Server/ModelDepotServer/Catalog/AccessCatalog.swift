import Foundation
import ModelDepotShared

/// Access keys and the console's sessions. One role of ``ModelCatalog``; every method throws
/// ``DepotError``. Revoking a key is written once, below, over ``changeKey(id:_:)``.
public protocol AccessCatalog: Sendable {
    func createKey(_ key: AccessKey, secretHash: [UInt8]) async throws
    func keys() async throws -> [AccessKey]
    func key(id: String) async throws -> (key: AccessKey, secretHash: [UInt8])?
    /// Every key that is not revoked, with its secret's hash.
    func workingKeys() async throws -> [(key: AccessKey, secretHash: [UInt8])]
    /// Changes a key's `revokedAt` to what `change` returns, given the key and the number of
    /// working admin tokens, both read under a lock that every change of a key takes (nothing is
    /// written when `change` throws).
    /// - Throws: ``DepotError`` `not_found` for a key that does not exist; what `change` throws.
    func changeKey(id: String, _ change: @escaping @Sendable (_ key: AccessKey, _ workingAdminTokens: Int) throws -> AccessKey)
        async throws -> AccessKey

    /// Stores a console session, and removes every session that began before `startedBefore` or
    /// was last used before `usedBefore` (ended by their lifetimes).
    func addSession(_ session: StoredSession, removingStartedBefore startedBefore: Date, usedBefore: Date) async throws
    /// The session stored under `id` (the SHA-256 of its cookie's value), or `nil`.
    func session(id: String) async throws -> StoredSession?
    /// Records that the session was used at `date`.
    func touchSession(id: String, at date: Date) async throws
    /// Removes the session stored under `id` (none there: nothing happens).
    func removeSession(id: String) async throws
    /// Removes every session of the key.
    func removeSessions(ofKey keyID: String) async throws
}

extension AccessCatalog {
    /// Revokes a key (a revoked one stays as it is); the last working admin token is never revoked.
    public func revokeKey(id: String, at date: Date) async throws -> AccessKey {
        try await changeKey(id: id) { key, workingAdminTokens in
            guard key.revokedAt == nil else { return key }
            if key.kind == .admin, workingAdminTokens <= 1 { throw CatalogRule.lastAdminToken(id) }
            var revoked = key
            revoked.revokedAt = date
            return revoked
        }
    }
}
