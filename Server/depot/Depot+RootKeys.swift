import ArgumentParser
import Crypto
import Foundation
import ModelDepotShared

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Depot.Keys {
    /// `depot keys root generate|init|show`.
    struct Root: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The offline root key, which signs the list of keys devices trust (root documents).",
            discussion: """
                Examples:
                  depot keys root generate --out ~/modeldepot-root.key
                  depot keys root init --root-key ~/modeldepot-root.key
                  depot keys root show
                """,
            subcommands: [Generate.self, Initialize.self, Show.self]
        )

        struct Generate: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Create a root key in a new file (mode 0600). Keep it offline; pin its public key in apps.",
                discussion: """
                    Examples:
                      depot keys root generate --out ~/modeldepot-root.key
                      depot keys root generate --out ~/modeldepot-root.key --json
                    """)
            @Option(help: "The file to create; an existing file is never overwritten.") var out: String
            @Flag(help: "Print JSON: {\"keyid\", \"publicKey\"}.") var json = false

            func run() async throws {
                let key = Curve25519.Signing.PrivateKey()
                try RootKeyFile.create(out, key)
                let described = PublicSigningKey(key.publicKey)
                print(
                    json
                        ? try JSONOutput.string(described)
                        : """
                        Wrote root key \(described.keyid) to \(out) (mode 0600). Keep it offline.
                        Public key, to pin in apps (ModelDownloaderConfiguration's trustedRoot):

                            \(described.publicKey)

                        Next: depot keys root init --root-key \(out)
                        """)
            }
        }

        struct Initialize: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "init",
                abstract: "Sign root document v1 with the root key: it lists the server's manifest key, and devices start to trust it.",
                discussion: """
                    Examples:
                      depot keys root init --root-key ~/modeldepot-root.key
                      depot keys root init --root-key ~/modeldepot-root.key --expires-in-days 730
                    """)
            @OptionGroup var connection: ConnectionOptions
            @Option(help: "The root key file from 'depot keys root generate'.") var rootKey: String
            @Option(help: "Days until the root document expires.") var expiresInDays = 365
            @Flag(help: "Print the published root document as JSON.") var json = false

            func run() async throws {
                try RootKeyFile.validate(days: expiresInDays)
                let key = try RootKeyFile.read(rootKey)
                let client = try connection.client()
                let status = try await client.get("/v1/admin/signing", as: SigningStatus.self)
                if let version = status.rootVersion {
                    throw DepotError(
                        .conflict,
                        "The server has root document v\(version) already; publish the next with 'depot keys rotate --root-key FILE'.")
                }
                let now = Date()
                let document = RootDocument(
                    version: 1, issued: now, expires: now.addingTimeInterval(Double(expiresInDays) * 86_400),
                    rootKeys: [PublicSigningKey(key.publicKey)], manifestKeys: [status.active])
                let published = try await client.post(
                    "/v1/admin/signing/roots", body: try SignedEnvelope(signing: document, with: [key]).encoded(),
                    as: RootDocument.self)
                print(json ? try JSONOutput.string(published) : RootKeyFile.summary(published, "Published"))
            }
        }

        struct Show: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Show the newest root document and the server's manifest keys.",
                discussion: """
                    Examples:
                      depot keys root show
                      depot keys root show --json
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Flag(help: "Print JSON: {\"signing\", \"root\"}.") var json = false

            struct Output: Encodable {
                var signing: SigningStatus
                var root: RootDocument?
            }

            func run() async throws {
                let client = try connection.client()
                let status = try await client.get("/v1/admin/signing", as: SigningStatus.self)
                let root = try await RootKeyFile.current(status, client)?.document
                if json { return print(try JSONOutput.string(Output(signing: status, root: root))) }
                print("Active manifest key: \(status.active.keyid)" + (status.pending.map { "\nPending manifest key: \($0.keyid)" } ?? ""))
                print(
                    root.map { RootKeyFile.summary($0, "Newest:") }
                        ?? "No root document yet: devices trust no manifest. Run 'depot keys root init --root-key FILE'.")
                if let root, root.expires.timeIntervalSinceNow < 30 * 86_400 {
                    print("Warning: it expires in less than 30 days; renew it with 'depot keys rotate --root-key FILE --keep-signing-key'.")
                }
            }
        }
    }

    /// `depot keys rotate`: root document N+1.
    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish root document N+1: a new manifest key (unless --keep-signing-key), and with --new-root-key a new root key.",
            discussion: """
                Examples:
                  depot keys rotate --root-key ~/modeldepot-root.key
                  depot keys rotate --root-key ~/modeldepot-root.key --keep-signing-key --expires-in-days 365
                  depot keys rotate --root-key ~/modeldepot-root.key --new-root-key ~/modeldepot-root-2.key

                The document is signed by the current root key and, when given, the new one; keys it
                no longer lists are revoked. The server signs manifests with the new key at once, and
                devices move to it the next time they check a model.
                """
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The current root key file.") var rootKey: String
        @Option(help: "A new root key file (from 'depot keys root generate') that replaces the current one.") var newRootKey: String?
        @Flag(help: "Keep the server's manifest key (rotate only the root key or refresh the expiry).") var keepSigningKey = false
        @Option(help: "Days until the root document expires.") var expiresInDays = 365
        @Flag(help: "Print the published root document as JSON.") var json = false

        func run() async throws {
            try RootKeyFile.validate(days: expiresInDays)
            let key = try RootKeyFile.read(rootKey)
            let newKey = try newRootKey.map { path throws(DepotError) in try RootKeyFile.read(path) }
            let client = try connection.client()
            let status = try await client.get("/v1/admin/signing", as: SigningStatus.self)
            guard let trusted = try await RootKeyFile.current(status, client) else {
                throw DepotError(
                    .conflict, "The server has no root document yet; publish v1 with 'depot keys root init --root-key \(rootKey)'.")
            }
            let current = trusted.document
            let old = PublicSigningKey(key.publicKey)
            guard current.rootKeys.contains(old) else {
                throw DepotError(
                    .badRequest,
                    "'\(rootKey)' holds key \(old.keyid), which is not a root key of root document v\(current.version) (\(current.rootKeys.map(\.keyid).joined(separator: ", ")))."
                )
            }
            // The next document copies this one's root keys: build only on a document this key
            // signed itself, never on key lists a compromised server made up.
            let (signed, payload) = try SignedEnvelope.decode(
                trusted.envelope, limit: TrustedRoot.maximumSize, what: "Root document v\(current.version)")
            guard (try? signed.verify(payload, keys: [old], threshold: 1, revoked: [], what: "")) != nil else {
                throw DepotError(
                    .untrustedRoot,
                    "Root document v\(current.version) on the server lists '\(rootKey)' but was not signed by it: the server may be compromised. Nothing was signed; check the server before rotating through it."
                )
            }
            let manifestKey = keepSigningKey ? status.active : try await client.post("/v1/admin/signing/keys", as: PublicSigningKey.self)
            let rootKeys =
                newKey.map { new in current.rootKeys.filter { $0 != old } + [PublicSigningKey(new.publicKey)] } ?? current.rootKeys
            let manifestKeys = [manifestKey]
            let listed = Set((rootKeys + manifestKeys).map(\.keyid))
            let revoked = Set(current.revokedKeys + (current.rootKeys + current.manifestKeys).map(\.keyid)).subtracting(listed)
            let now = Date()
            let document = RootDocument(
                version: current.version + 1, issued: now,
                expires: now.addingTimeInterval(Double(expiresInDays) * 86_400),
                rootKeys: rootKeys, rootThreshold: min(current.rootThreshold, rootKeys.count),
                manifestKeys: manifestKeys, manifestThreshold: 1, revokedKeys: revoked.sorted())
            let envelope = try SignedEnvelope(signing: document, with: [key] + (newKey.map { [$0] } ?? []))
            let published = try await client.post("/v1/admin/signing/roots", body: try envelope.encoded(), as: RootDocument.self)
            print(json ? try JSONOutput.string(published) : RootKeyFile.summary(published, "Published"))
        }
    }
}

/// Root key files and root documents for the CLI.
enum RootKeyFile {
    /// Creates a key file with mode 0600; fails if the path exists.
    static func create(_ path: String, _ key: Curve25519.Signing.PrivateKey) throws(DepotError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            throw DepotError(
                .badRequest,
                "Could not create '\(path)': \(String(cString: strerror(errno))). An existing key file is never overwritten; choose another path."
            )
        }
        defer { close(descriptor) }
        let text = Array(key.fileText.utf8)
        guard write(descriptor, text, text.count) == text.count, fsync(descriptor) == 0 else {
            throw DepotError(.badRequest, "Could not write '\(path)': \(String(cString: strerror(errno))).")
        }
    }

    static func read(_ path: String) throws(DepotError) -> Curve25519.Signing.PrivateKey {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DepotError(.badRequest, "Could not read the key file '\(path)'; give the file 'depot keys root generate --out' wrote.")
        }
        return try Curve25519.Signing.PrivateKey(fileText: String(decoding: data, as: UTF8.self), path: path)
    }

    static func validate(days: Int) throws {
        guard (1...3650).contains(days) else { throw ValidationError("--expires-in-days must be between 1 and 3650, not \(days).") }
    }

    /// The server's newest root document, checked to be signed by its own root keys.
    static func current(_ status: SigningStatus, _ client: AdminClient) async throws -> TrustedRoot? {
        guard let version = status.rootVersion else { return nil }
        return try TrustedRoot(first: try await client.data("/v1/keys/root/\(version).json"))
    }

    static func summary(_ document: RootDocument, _ verb: String) -> String {
        """
        \(verb) root document v\(document.version), expires \(document.expires.formatted(.iso8601)).
          root keys (\(document.rootThreshold) must sign): \(document.rootKeys.map(\.keyid).joined(separator: ", "))
          manifest key: \(document.manifestKeys.map(\.keyid).joined(separator: ", "))
          revoked: \(document.revokedKeys.isEmpty ? "none" : document.revokedKeys.joined(separator: ", "))
        """
    }
}
