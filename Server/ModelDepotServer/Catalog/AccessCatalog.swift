import Foundation
import ModelDepotShared

/// Access keys and the console's sessions. One role of ``ModelCatalog``; every method throws
/// ``DepotError``.
public protocol AccessCatalog: Sendable {
    func createKey(_ key: AccessKey, secretHash: [UInt8]) async throws
    func keys() async throws -> [AccessKey]
    func key(id: String) async throws -> (key: AccessKey, secretHash: [UInt8])?
    /// Every key that is not revoked, with its secret's hash.
    func workingKeys() async throws -> [(key: AccessKey, secretHash: [UInt8])]
    func revokeKey(id: String, at date: Date) async throws -> AccessKey

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
