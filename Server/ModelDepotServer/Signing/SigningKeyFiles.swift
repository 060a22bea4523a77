import Crypto
import Foundation
import ModelDepotShared

#if canImport(Glibc)
    import Glibc
    private let systemWrite = Glibc.write
#elseif canImport(Darwin)
    import Darwin
    private let systemWrite = Darwin.write
#endif

/// The server's online manifest keys on disk: `keys/<keyid>.ed25519` (mode 0600, in a 0700
/// folder) and `keys/signing.json`, which names the active key and a pending one; and the
/// ``IdentifierKey``'s secret, `keys/identifiers.key` (its 32 bytes, mode 0600).
struct SigningKeyFiles: Sendable {
    /// What `signing.json` holds.
    struct State: Codable {
        var active: String
        var pending: String?
    }

    let directory: String

    init(storage: String) { directory = storage + "/keys" }

    /// Reads the keys, creating the folder and a first active key when there is none.
    func load() throws(DepotError) -> (active: Curve25519.Signing.PrivateKey, pending: Curve25519.Signing.PrivateKey?) {
        try makeDirectory()
        guard let data = FileManager.default.contents(atPath: directory + "/signing.json") else {
            let key = Curve25519.Signing.PrivateKey()
            try write(key)
            try save(State(active: PublicSigningKey.keyID(of: key.publicKey), pending: nil))
            return (key, nil)
        }
        guard let state = try? JSONDecoder().decode(State.self, from: data) else {
            throw DepotError(.internalError, "'\(directory)/signing.json' is damaged; restore it from a backup.")
        }
        return (try read(state.active), try state.pending.map { keyid throws(DepotError) in try read(keyid) })
    }

    /// The identifier secret, made and written on first use.
    func loadIdentifierSecret() throws(DepotError) -> [UInt8] {
        try makeDirectory()
        let path = identifierSecretPath
        if let data = FileManager.default.contents(atPath: path) { return Array(data) }
        let secret = IdentifierKey.newSecret()
        try writePrivately(Data(secret), to: path)
        return secret
    }

    /// The identifier secret when one was made, without making one.
    func storedIdentifierSecret() -> [UInt8]? {
        FileManager.default.contents(atPath: identifierSecretPath).map { Array($0) }
    }

    private var identifierSecretPath: String { directory + "/identifiers.key" }

    private func makeDirectory() throws(DepotError) {
        guard mkdir(directory, 0o700) == 0 || errno == EEXIST else { throw FileSystemBlobStore.failure("create", directory) }
        guard chmod(directory, 0o700) == 0 else { throw FileSystemBlobStore.failure("restrict the permissions of", directory) }
    }

    /// Writes a new private key file (mode 0600, fsynced).
    func write(_ key: Curve25519.Signing.PrivateKey) throws(DepotError) {
        try writePrivately(Data(key.fileText.utf8), to: directory + "/\(PublicSigningKey.keyID(of: key.publicKey)).ed25519")
    }

    /// Records which key is active and which is pending.
    func save(_ state: State) throws(DepotError) {
        guard let data = try? JSONEncoder().encode(state) else { throw DepotError(.internalError, "Could not encode the signing state.") }
        try writePrivately(data, to: directory + "/signing.json")
    }

    /// Removes a key that is no longer used (revoked by a root document).
    func remove(_ keyid: String) {
        unlink(directory + "/\(keyid).ed25519")
    }

    private func read(_ keyid: String) throws(DepotError) -> Curve25519.Signing.PrivateKey {
        let path = directory + "/\(keyid).ed25519"
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DepotError(.internalError, "The signing key file '\(path)' is missing; restore it from a backup.")
        }
        let key = try Curve25519.Signing.PrivateKey(fileText: String(decoding: data, as: UTF8.self), path: path)
        guard PublicSigningKey.keyID(of: key.publicKey) == keyid else {
            throw DepotError(.internalError, "'\(path)' holds another key than its name says.")
        }
        return key
    }

    /// Writes through a temporary file created with mode 0600, fsync and rename.
    private func writePrivately(_ data: Data, to path: String) throws(DepotError) {
        let temporary = path + ".tmp"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw FileSystemBlobStore.failure("create", temporary) }
        let written = data.withUnsafeBytes { systemWrite(descriptor, $0.baseAddress, $0.count) }
        guard written == data.count, fsync(descriptor) == 0 else {
            let failure =
                written >= 0 && written < data.count
                ? DepotError(
                    .internalError,
                    "Could not write '\(temporary)': only \(written) of \(data.count) bytes were written. Check the storage directory's space."
                )
                : FileSystemBlobStore.failure("write", temporary)
            close(descriptor)
            unlink(temporary)
            throw failure
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else {
            let failure = FileSystemBlobStore.failure("move into place", path)
            unlink(temporary)
            throw failure
        }
        try FileSystemBlobStore.synchronizeDirectory(directory)
    }
}
