import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotServer

/// Root documents, the online manifest key, and signed manifests through the router.
@Suite struct SigningAPITests {
    func root(
        _ version: Int, rootKeys: [Curve25519.Signing.PrivateKey], manifestKeys: [PublicSigningKey], revoked: [String] = [],
        signedBy signers: [Curve25519.Signing.PrivateKey], expiresIn: TimeInterval = 86_400
    ) throws -> ByteBuffer {
        let document = RootDocument(
            version: version, issued: Date(), expires: Date().addingTimeInterval(expiresIn),
            rootKeys: rootKeys.map { PublicSigningKey($0.publicKey) }, manifestKeys: manifestKeys, revokedKeys: revoked)
        return ByteBuffer(bytes: try SignedEnvelope(signing: document, with: signers).encoded())
    }

    func status(_ client: TestServer.Client) async throws -> SigningStatus {
        try await client.request(.get, "/v1/admin/signing").decode(SigningStatus.self)
    }

    @Test(arguments: DepotBackend.allCases) func manifestsAreSignedByTheKeyTheRootDocumentLists(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            try await client.createModel("flowers")
            _ = try await client.upload("float_classifier", to: "flowers")
            let app = try await client.appKey()
            let before = try await status(client)
            #expect(before.rootVersion == nil)
            #expect(
                try await client.request(.get, "/v1/models/flowers/manifest", headers: app).headers[HTTPField.Name("Depot-Root-Version")!]
                    == nil)
            #expect(try await client.request(.get, "/v1/keys/root/1.json", headers: app).status == .notFound)

            let rootKey = Curve25519.Signing.PrivateKey()
            let published = try await client.request(
                .post, "/v1/admin/signing/roots",
                body: root(1, rootKeys: [rootKey], manifestKeys: [before.active], signedBy: [rootKey]))
            #expect(published.status == .created, "\(published.text)")
            let served = try await client.request(.get, "/v1/keys/root/1.json", headers: app)
            #expect(served.headers[.cacheControl] == "public, max-age=31536000, immutable")
            let trusted = try TrustedRoot(first: Data(served.body.readableBytesView), pinnedKey: PublicSigningKey(rootKey.publicKey))

            let response = try await client.request(.get, "/v1/models/flowers/manifest", headers: app)
            #expect(response.headers[HTTPField.Name("Depot-Root-Version")!] == "1")
            let manifest = try trusted.verifyManifest(
                Data(response.body.readableBytesView), for: try ModelName("flowers"), now: Date(),
                clockSkew: 0, minimumVersion: nil
            ).manifest
            #expect(manifest.version == 1)
            #expect(manifest.expires.timeIntervalSince(manifest.issued) == 7 * 24 * 3600)

            await #expect(try client.storedSigningKeys() == [before.active.keyid])
            if client.database == nil {
                let keys = client.storage.appendingPathComponent("keys")
                let folder = try FileManager.default.attributesOfItem(atPath: keys.path)[.posixPermissions] as? Int
                let file = try FileManager.default.attributesOfItem(
                    atPath: keys.appendingPathComponent("\(before.active.keyid).ed25519").path)
                #expect(folder == 0o700)
                #expect(file[.posixPermissions] as? Int == 0o600)
            }
        }
    }

    @Test(arguments: DepotBackend.allCases) func rotationSwitchesTheSigningKeyAndDeletesTheOldOne(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            try await client.createModel("flowers")
            _ = try await client.upload("float_classifier", to: "flowers")
            let app = try await client.appKey()
            let old = try await status(client).active
            let rootKey = Curve25519.Signing.PrivateKey()
            try await client.request(
                .post, "/v1/admin/signing/roots", body: root(1, rootKeys: [rootKey], manifestKeys: [old], signedBy: [rootKey]))
            let first = try await client.request(.get, "/v1/models/flowers/manifest", headers: app)

            let pending = try await client.request(.post, "/v1/admin/signing/keys").decode(PublicSigningKey.self)
            #expect(
                try await client.request(.post, "/v1/admin/signing/keys").decode(PublicSigningKey.self) == pending,
                "one pending key at a time")
            #expect(try await status(client).pending == pending)
            #expect(
                try await client.request(.get, "/v1/models/flowers/manifest", headers: app).headers[.eTag] == first.headers[.eTag],
                "a pending key signs nothing")
            let rotated = try await client.request(
                .post, "/v1/admin/signing/roots",
                body: root(2, rootKeys: [rootKey], manifestKeys: [pending], revoked: [old.keyid], signedBy: [rootKey]))
            #expect(rotated.status == .created, "\(rotated.text)")
            #expect(try await status(client) == SigningStatus(active: pending, pending: nil, rootVersion: 2))

            let trusted = try TrustedRoot(
                first: Data(try await client.request(.get, "/v1/keys/root/1.json", headers: app).body.readableBytesView)
            )
            .successor(Data(try await client.request(.get, "/v1/keys/root/2.json", headers: app).body.readableBytesView))
            let second = try await client.request(.get, "/v1/models/flowers/manifest", headers: app)
            #expect(second.headers[HTTPField.Name("Depot-Root-Version")!] == "2")
            let manifest = try trusted.verifyManifest(
                Data(second.body.readableBytesView), for: try ModelName("flowers"), now: Date(),
                clockSkew: 0, minimumVersion: nil
            ).manifest
            #expect(
                manifest.manifestVersion == (try first.manifest().manifestVersion),
                "the model did not change: the same version, signed again by the new key")
            #expect(second.headers[.eTag] != first.headers[.eTag])
            let error = #expect(throws: DepotError.self) {
                try trusted.verifyManifest(
                    Data(first.body.readableBytesView), for: try ModelName("flowers"), now: Date(), clockSkew: 0, minimumVersion: nil)
            }
            #expect(error?.code == .revokedSigningKey)
            await #expect(try client.storedSigningKeys() == [pending.keyid], "the old key is forgotten")
        }
    }

    @Test(arguments: DepotBackend.allCases) func refusedRootDocumentsChangeNothing(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let active = try await status(client).active
            let rootKey = Curve25519.Signing.PrivateKey()
            let stranger = Curve25519.Signing.PrivateKey()
            func post(_ body: ByteBuffer, headers: HTTPFields = TestServer.Client.admin) async throws -> (HTTPResponse.Status, DepotError?)
            {
                let response = try await client.request(.post, "/v1/admin/signing/roots", headers: headers, body: body)
                return (response.status, response.error)
            }
            let cases: [(ByteBuffer, HTTPResponse.Status, String)] = [
                (
                    try root(1, rootKeys: [rootKey], manifestKeys: [active], signedBy: [stranger]), .badRequest,
                    "is not signed by 1 of its own root keys"
                ),
                (try root(1, rootKeys: [rootKey], manifestKeys: [active], signedBy: []), .badRequest, "carries no signature"),
                (try root(2, rootKeys: [rootKey], manifestKeys: [active], signedBy: [rootKey]), .conflict, "the first must be v1, not v2"),
                (
                    try root(1, rootKeys: [rootKey], manifestKeys: [PublicSigningKey(stranger.publicKey)], signedBy: [rootKey]),
                    .badRequest,
                    "lists no manifest key this server holds"
                ),
                (try root(1, rootKeys: [rootKey], manifestKeys: [active], signedBy: [rootKey], expiresIn: -60), .badRequest, "expired at"),
                (ByteBuffer(string: "{\"payload\": 1"), .badRequest, "is not a signed envelope"),
                (ByteBuffer(repeating: 32, count: TrustedRoot.maximumSize + 1), .contentTooLarge, "at most 524288 bytes"),
            ]
            for (body, status, message) in cases {
                let (got, error) = try await post(body)
                #expect(got == status, "\(message)")
                #expect(error?.message.contains(message) == true, "\(error?.message ?? "no error") should say: \(message)")
            }
            let app = try await client.appKey()
            #expect(
                try await post(try root(1, rootKeys: [rootKey], manifestKeys: [active], signedBy: [rootKey]), headers: app).0 == .forbidden)
            #expect(try await status(client) == SigningStatus(active: active, pending: nil, rootVersion: nil))

            #expect(try await post(try root(1, rootKeys: [rootKey], manifestKeys: [active], signedBy: [rootKey])).0 == .created)
            let (again, _) = try await post(try root(1, rootKeys: [rootKey], manifestKeys: [active], signedBy: [rootKey]))
            #expect(again == .conflict)
            let (skipped, skippedError) = try await post(try root(3, rootKeys: [rootKey], manifestKeys: [active], signedBy: [rootKey]))
            #expect(skipped == .conflict)
            #expect(skippedError?.message.contains("the next must be v2, not v3") == true)
            let (hijack, hijackError) = try await post(try root(2, rootKeys: [stranger], manifestKeys: [active], signedBy: [stranger]))
            #expect(hijack == .badRequest)
            #expect(hijackError?.message.contains("is not signed by 1 of the root keys of v1") == true)
            #expect(try await client.request(.get, "/v1/keys/root/2.json", headers: app).status == .notFound)
            #expect(try await client.request(.get, "/v1/keys/root/02.json", headers: app).status == .badRequest)
            #expect(try await status(client).rootVersion == 1)
        }
    }

    @Test(arguments: DepotBackend.allCases) func manifestsAreSignedAgainAfterHalfTheirLifetime(_ backend: DepotBackend) async throws {
        let clock = MovableClock()
        var server = try await TestServer(backend)
        server.configuration.clock = { clock.now }
        server.configuration.manifestLifetime = 3600
        try await server.run { client in
            try await client.createModel("flowers")
            _ = try await client.upload("float_classifier", to: "flowers")
            let app = try await client.appKey()
            let first = try await client.request(.get, "/v1/models/flowers/manifest", headers: app)
            clock.advance(by: 1700)
            #expect(try await client.request(.get, "/v1/models/flowers/manifest", headers: app).headers[.eTag] == first.headers[.eTag])
            clock.advance(by: 200)
            let second = try await client.request(.get, "/v1/models/flowers/manifest", headers: app)
            #expect(second.headers[.eTag] != first.headers[.eTag])
            let (old, new) = (try first.manifest(), try second.manifest())
            #expect(new.manifestVersion == old.manifestVersion, "re-signing is not a change")
            #expect(new.issued.timeIntervalSince(old.issued) >= 1899)
            #expect(new.expires.timeIntervalSince(clock.now) >= 3599)
        }
    }

    @Test func startUpWarnsAboutMissingUnlistedOrExpiringRootDocuments() async throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("depot-signer-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: storage) }
        try FileManager.default.createDirectory(atPath: storage, withIntermediateDirectories: true)
        let catalog = try SQLiteModelCatalog(path: storage + "/depot.sqlite")
        let signer = try await ManifestSigner(keys: SigningKeyFiles(storage: storage), catalog: catalog)
        #expect(signer.startupWarning(now: Date())?.contains("No root document yet") == true)

        let rootKey = Curve25519.Signing.PrivateKey()
        let active = signer.status.active
        _ = try await signer.accept(
            Data(try root(1, rootKeys: [rootKey], manifestKeys: [active], signedBy: [rootKey], expiresIn: 90 * 86_400).readableBytesView),
            catalog: catalog, now: Date())
        #expect(try await signer.reload(catalog: catalog), "the stored root document changes what signs")
        #expect(signer.startupWarning(now: Date()) == nil)
        #expect(signer.startupWarning(now: Date().addingTimeInterval(70 * 86_400))?.contains("expires at") == true)

        try FileManager.default.removeItem(atPath: storage + "/keys")
        let restarted = try await ManifestSigner(keys: SigningKeyFiles(storage: storage), catalog: catalog)
        #expect(restarted.startupWarning(now: Date())?.contains("does not list this server's manifest key") == true)
    }
}
