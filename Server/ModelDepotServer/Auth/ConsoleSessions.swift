import Foundation
import ModelDepotShared

/// Console sessions and their two lifetimes, over the catalog's session table: a session ends
/// when it has not been used for ``idleTimeout``, ``lifetime`` after it began, when it signs out,
/// or when its admin token is revoked.
struct ConsoleSessions: Sendable {
    /// Uses closer together than this record nothing new: a page's requests write once.
    static let touchInterval: TimeInterval = 60

    let catalog: any AccessCatalog
    /// How long an unused session lasts (`--console-idle-timeout`).
    let idleTimeout: TimeInterval
    /// How long a session lasts at most (`--console-session-lifetime`).
    let lifetime: TimeInterval
    let clock: @Sendable () -> Date

    /// Begins a session for an admin key, removing the sessions that have ended meanwhile.
    func begin(for key: AccessKey) async throws -> ConsoleSession {
        let session = ConsoleSession.generate()
        let now = clock()
        try await catalog.addSession(
            StoredSession(id: session.storedID, keyID: key.id, startedAt: now, usedAt: now),
            removingStartedBefore: now.addingTimeInterval(-lifetime), usedBefore: now.addingTimeInterval(-idleTimeout))
        return session
    }

    /// The id of the key signed in with `session`, or `nil` when it is unknown or has ended (an
    /// ended one is removed).
    func keyID(of session: ConsoleSession) async throws -> String? {
        guard let stored = try await catalog.session(id: session.storedID) else { return nil }
        let now = clock()
        guard now.timeIntervalSince(stored.startedAt) < lifetime, now.timeIntervalSince(stored.usedAt) < idleTimeout else {
            try await catalog.removeSession(id: stored.id)
            return nil
        }
        if now.timeIntervalSince(stored.usedAt) >= Self.touchInterval { try await catalog.touchSession(id: stored.id, at: now) }
        return stored.keyID
    }

    /// Ends a session (signing out).
    func end(_ session: ConsoleSession) async throws {
        try await catalog.removeSession(id: session.storedID)
    }

    /// Ends every session of a key (revoked).
    func endAll(ofKey keyID: String) async throws {
        try await catalog.removeSessions(ofKey: keyID)
    }
}
