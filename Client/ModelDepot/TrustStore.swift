import Foundation
import ModelDepotShared

/// What the device trusts, kept in the state directory (never in purgeable space) so it survives
/// restarts and cache purges:
///
///     <state>/trust/root.json    the newest root document verified along the chain
///     <state>/trust/state.json   the pin the root grew from, the highest manifest version accepted
///                                per model and the keys that signed it, and when root documents
///                                were last checked
///
/// A file that exists but cannot be read (before the first unlock) is an error
/// (`storage_unreadable`), never "nothing trusted yet": rollback protection does not reset.
struct TrustStore: Sendable {
    struct State: Codable {
        var pin: String
        var manifestVersions: [String: Int] = [:]
        /// The manifest keys that signed each model's floor; absent for floors recorded before
        /// signers were (those are never withdrawn).
        var manifestSigners: [String: Set<String>] = [:]
        var rootCheckedAt: Date?

        init(pin: String, manifestVersions: [String: Int] = [:], manifestSigners: [String: Set<String>] = [:]) {
            self.pin = pin
            self.manifestVersions = manifestVersions
            self.manifestSigners = manifestSigners
        }

        /// Reads a state written by this or an earlier SDK, which had no signers.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            pin = try container.decode(String.self, forKey: .pin)
            manifestVersions = try container.decodeIfPresent([String: Int].self, forKey: .manifestVersions) ?? [:]
            manifestSigners = try container.decodeIfPresent([String: Set<String>].self, forKey: .manifestSigners) ?? [:]
            rootCheckedAt = try container.decodeIfPresent(Date.self, forKey: .rootCheckedAt)
        }
    }

    let directory: URL
    let pin: String

    init(stateDirectory: URL, pinned: PinnedRoot) {
        directory = stateDirectory.appendingPathComponent("trust")
        switch pinned {
        case .publicKey(let key): pin = "key:" + key
        case .rootDocument(let data): pin = "root:" + data.base64EncodedString()
        }
    }

    /// The stored root, if it grew from the same pin.
    /// - Throws: `DepotError` (`storage_unreadable`).
    func root() throws(DepotError) -> TrustedRoot? {
        guard try storedState()?.pin == pin, let data = try StoredFile.contents(of: directory.appendingPathComponent("root.json")) else {
            return nil
        }
        return try? TrustedRoot(first: data)
    }

    /// Stores a newly trusted root and the state that goes with it.
    func save(_ root: TrustedRoot, _ state: State) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try StoredFile.write(root.envelope, to: directory.appendingPathComponent("root.json"))
        try save(state)
    }

    /// The state. After a change of pin (an app update that pins another key) the root chain
    /// starts again, but the manifest versions accepted so far still hold.
    /// - Throws: `DepotError` (`storage_unreadable`).
    func state() throws(DepotError) -> State {
        guard let stored = try storedState() else { return State(pin: pin) }
        guard stored.pin == pin else {
            return State(pin: pin, manifestVersions: stored.manifestVersions, manifestSigners: stored.manifestSigners)
        }
        return stored
    }

    private func storedState() throws(DepotError) -> State? {
        try StoredFile.contents(of: directory.appendingPathComponent("state.json")).flatMap {
            try? SignedJSON.decoder.decode(State.self, from: $0)
        }
    }

    func save(_ state: State) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try StoredFile.write(SignedJSON.encoder.encode(state), to: directory.appendingPathComponent("state.json"))
    }
}
