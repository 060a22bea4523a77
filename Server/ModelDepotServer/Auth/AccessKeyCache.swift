import Foundation
import ModelDepotShared
import Synchronization

/// Working keys in memory, so authenticating the manifest hot path never touches the database.
/// Reloaded from the catalog after every key change.
final class AccessKeyCache: Sendable {
    private struct Entry: Sendable {
        let key: AccessKey
        let secretHash: [UInt8]
    }

    /// The working keys by id (for generated secrets, which name their id) and by their secret's
    /// hash (for secrets an operator chose).
    private struct Keys: Sendable {
        var byID: [String: Entry] = [:]
        var byHash: [[UInt8]: Entry] = [:]

        func entry(for secret: AccessKeySecret) -> Entry? {
            guard let id = secret.embeddedID else { return byHash[secret.hash] }
            return byID[id]
        }
    }

    private let catalog: any AccessCatalog
    /// The keys, and how often they were invalidated (a load that began before the last
    /// invalidation is used once but not kept).
    private let entries = Mutex<(keys: Keys?, generation: Int)>((nil, 0))

    init(catalog: any AccessCatalog) {
        self.catalog = catalog
    }

    /// The working key a bearer secret belongs to.
    /// - Throws: ``DepotError`` (`unauthorized`) for an unknown, wrong or revoked secret.
    func authenticate(_ secret: String) async throws -> AccessKey {
        let secret = AccessKeySecret(text: secret)
        let entry = try await entries().entry(for: secret)
        guard let entry, AccessKeySecret.constantTimeEqual(entry.secretHash, secret.hash) else {
            throw DepotError(
                .unauthorized,
                "The API key is not valid. Check DEPOT_TOKEN (or the app key in the SDK configuration), or create a key with 'depot keys create'."
            )
        }
        return entry.key
    }

    /// The working key with id `id`, or `nil` when there is none (unknown or revoked).
    func workingKey(id: String) async throws -> AccessKey? {
        try await entries().byID[id]?.key
    }

    /// The working key a bearer secret belongs to, if the keys are cached; `nil` when they are not
    /// or the secret is wrong (then ``authenticate(_:)`` answers, with the error).
    /// `generation` tells whether the answer still holds later (``isCurrent(_:)``).
    func cachedKey(_ secret: Substring) -> (key: AccessKey, generation: Int)? {
        let secret = AccessKeySecret(text: String(secret))
        guard let (entry, generation) = entries.withLock({ state in state.keys?.entry(for: secret).map { ($0, state.generation) } }),
            AccessKeySecret.constantTimeEqual(entry.secretHash, secret.hash)
        else {
            return nil
        }
        return (entry.key, generation)
    }

    /// Whether no key changed since ``cachedKey(_:)`` answered with `generation`.
    func isCurrent(_ generation: Int) -> Bool {
        entries.withLock { $0.generation == generation }
    }

    /// Drops the cached keys; the next request reloads them.
    func invalidate() {
        entries.withLock { $0 = (nil, $0.generation + 1) }
    }

    private func entries() async throws -> Keys {
        let (cached, generation) = entries.withLock { ($0.keys, $0.generation) }
        if let cached { return cached }
        var loaded = Keys()
        for (key, hash) in try await catalog.workingKeys() {
            loaded.byID[key.id] = Entry(key: key, secretHash: hash)
            loaded.byHash[hash] = Entry(key: key, secretHash: hash)
        }
        entries.withLock { if $0.generation == generation { $0.keys = loaded } }
        return loaded
    }
}
