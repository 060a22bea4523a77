import Crypto
import Foundation
import ModelDepotShared
import Testing

/// Signed envelopes, root document chains and manifest checks, without a server.
@Suite struct TrustedRootTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let rootKey = Curve25519.Signing.PrivateKey()
    let manifestKey = Curve25519.Signing.PrivateKey()

    func document(
        version: Int = 1, rootKeys: [Curve25519.Signing.PrivateKey]? = nil, rootThreshold: Int = 1,
        manifestKeys: [Curve25519.Signing.PrivateKey]? = nil, revoked: [String] = [], expires: TimeInterval = 86_400
    ) -> RootDocument {
        RootDocument(
            version: version, issued: now, expires: now.addingTimeInterval(expires),
            rootKeys: (rootKeys ?? [rootKey]).map { PublicSigningKey($0.publicKey) }, rootThreshold: rootThreshold,
            manifestKeys: (manifestKeys ?? [manifestKey]).map { PublicSigningKey($0.publicKey) }, revokedKeys: revoked)
    }

    func signed(_ value: some Encodable, _ keys: [Curve25519.Signing.PrivateKey]) throws -> Data {
        try SignedEnvelope(signing: value, with: keys).encoded()
    }

    func manifest(_ model: String = "flowers", manifestVersion: Int = 5, expires: TimeInterval = 3600) throws -> ModelManifest {
        ModelManifest(
            model: try ModelName(model), version: 2, sha256: String(repeating: "a", count: 64), size: 10, downloadURL: "/x",
            tensors: .init(inputs: [], outputs: []), arm: "latest", manifestVersion: manifestVersion, issued: now,
            expires: now.addingTimeInterval(expires))
    }

    func code(_ body: () throws -> Void) -> DepotError.Code? {
        do { try body() } catch let error as DepotError { return error.code } catch { return nil }
        return nil
    }

    @Test func aSignedManifestIsAcceptedAndEveryFlawIsNamed() throws {
        let root = try TrustedRoot(first: try signed(document(), [rootKey]), pinnedKey: PublicSigningKey(rootKey.publicKey))
        let flowers = try ModelName("flowers")
        let good = try signed(manifest(), [manifestKey])
        #expect(try root.verifyManifest(good, for: flowers, now: now, clockSkew: 0, minimumVersion: 5).manifest.version == 2)

        func verify(_ data: Data, model: ModelName? = nil, at time: Date? = nil, skew: TimeInterval = 0, minimum: Int? = nil) -> DepotError
            .Code?
        {
            code { _ = try root.verifyManifest(data, for: model ?? flowers, now: time ?? now, clockSkew: skew, minimumVersion: minimum) }
        }
        var envelope = try JSONDecoder().decode(SignedEnvelope.self, from: good)
        #expect(verify(try JSONEncoder().encode(SignedEnvelope(payload: envelope.payload, signatures: []))) == .unsignedManifest)
        #expect(verify(try SignedJSON.encoder.encode(manifest())) == .unsignedManifest)
        #expect(verify(try signed(manifest(), [Curve25519.Signing.PrivateKey()])) == .unknownSigningKey)
        envelope.signatures.append(envelope.signatures[0])
        #expect(verify(try JSONEncoder().encode(envelope)) == .duplicateSignature)
        let forged = SignedEnvelope(
            payload: try SignedJSON.encoder.encode(manifest(manifestVersion: 99)).base64EncodedString(),
            signatures: [envelope.signatures[0]])
        #expect(verify(try JSONEncoder().encode(forged)) == .invalidSignature)
        #expect(verify(good, model: try ModelName("tulips")) == .manifestMismatch)
        #expect(verify(good, minimum: 6) == .manifestRollback)
        #expect(verify(good, at: now.addingTimeInterval(3600)) == .manifestExpired)
        #expect(verify(good, at: now.addingTimeInterval(3600), skew: 60) == nil, "the clock-skew allowance")
        #expect(verify(good, at: now.addingTimeInterval(86_400)) == .rootExpired)
        #expect(verify(Data(repeating: 32, count: ModelManifest.maximumSize + 1)) == .metadataTooLarge)
        #expect(verify(try signed(document(), [manifestKey])) == .invalidMetadata, "a root document can't pass for a manifest")
        var impossible = try manifest()
        impossible.sha256 = "../../x"
        #expect(verify(try signed(impossible, [manifestKey])) == .invalidMetadata)
        impossible = try manifest()
        impossible.size = -1
        #expect(verify(try signed(impossible, [manifestKey])) == .invalidMetadata)
        let digest = String(repeating: "b", count: 64)
        for bad in ["../../Library/x", String(repeating: "B", count: 64), String(repeating: "b", count: 63) + "/"] {
            let patch = ModelManifest.Patch(from: digest, sha256: digest, size: 1, downloadURL: "/p")
            var withFile = try manifest()
            withFile.files = [.init(name: "labels.txt", sha256: bad, size: 1, downloadURL: "/f")]
            var withPatch = try manifest()
            withPatch.patches = [ModelManifest.Patch(from: bad, sha256: digest, size: 1, downloadURL: "/p")]
            var withFilePatch = try manifest()
            withFilePatch.files = [
                .init(
                    name: "labels.txt", sha256: digest, size: 1, downloadURL: "/f",
                    patches: [patch, .init(from: digest, sha256: bad, size: 1, downloadURL: "/p")])
            ]
            for flawed in [withFile, withPatch, withFilePatch] {
                let error = #expect(throws: DepotError.self) {
                    try root.verifyManifest(try signed(flawed, [manifestKey]), for: flowers, now: now, clockSkew: 0, minimumVersion: nil)
                }
                #expect(error?.code == .invalidMetadata && error?.message.contains("names a file by '\(bad)'") == true)
            }
        }
        // Sizes the SDK adds and subtracts (a negative one trapped the app): refused, each.
        for bad in [-1, Int.min, (1 << 40) + 1, Int.max] {
            let patch = ModelManifest.Patch(from: digest, sha256: digest, size: bad, downloadURL: "/p")
            var withFile = try manifest()
            withFile.files = [.init(name: "labels.txt", sha256: digest, size: bad, downloadURL: "/f")]
            var withPatch = try manifest()
            withPatch.patches = [patch]
            var withFilePatch = try manifest()
            withFilePatch.files = [.init(name: "labels.txt", sha256: digest, size: 1, downloadURL: "/f", patches: [patch])]
            for flawed in [withFile, withPatch, withFilePatch] {
                let error = #expect(throws: DepotError.self) {
                    try root.verifyManifest(try signed(flawed, [manifestKey]), for: flowers, now: now, clockSkew: 0, minimumVersion: nil)
                }
                #expect(error?.code == .invalidMetadata && error?.message.contains("a patch \(bad) bytes") == true, "\(bad)")
            }
        }
        var empty = try manifest()
        empty.files = [.init(name: "empty.txt", sha256: digest, size: 0, downloadURL: "/f")]
        #expect(verify(try signed(empty, [manifestKey])) == nil, "an empty companion file is a file")
    }

    @Test func revokedKeysAreNamedAsRevoked() throws {
        let old = Curve25519.Signing.PrivateKey()
        let root = try TrustedRoot(first: try signed(document(revoked: [PublicSigningKey.keyID(of: old.publicKey)]), [rootKey]))
        let error = #expect(throws: DepotError.self) {
            try root.verifyManifest(
                try signed(manifest(), [old]), for: try ModelName("flowers"), now: now, clockSkew: 0, minimumVersion: nil)
        }
        #expect(error?.code == .revokedSigningKey)
    }

    @Test func aManifestThresholdCountsDistinctValidKeys() throws {
        let second = Curve25519.Signing.PrivateKey()
        var twoOfTwo = document(manifestKeys: [manifestKey, second])
        twoOfTwo.manifestThreshold = 2
        let root = try TrustedRoot(first: try signed(twoOfTwo, [rootKey]))
        let flowers = try ModelName("flowers")
        #expect(
            try root.verifyManifest(
                try signed(manifest(), [manifestKey, second]), for: flowers, now: now, clockSkew: 0, minimumVersion: nil
            ).manifest.version == 2)
        #expect(
            code {
                _ = try root.verifyManifest(
                    try signed(manifest(), [manifestKey]), for: flowers, now: now, clockSkew: 0, minimumVersion: nil)
            } == .invalidSignature)
    }

    @Test func aManifestsSignersAreTheKeysWhoseSignaturesVerifyAndARotationWithdrawsThem() throws {
        let second = Curve25519.Signing.PrivateKey()
        let root = try TrustedRoot(first: try signed(document(manifestKeys: [manifestKey, second]), [rootKey]))
        // Given a manifest signed by the first key, with a signature by the second over other bytes
        var envelope = try SignedEnvelope(signing: try manifest(), with: [manifestKey])
        envelope.signatures += try SignedEnvelope(signing: try manifest(manifestVersion: 6), with: [second]).signatures
        // When it is verified, only the first key vouched for it
        let verified = try root.verifyManifest(
            try envelope.encoded(), for: try ModelName("flowers"), now: now, clockSkew: 0, minimumVersion: nil)
        let first = PublicSigningKey.keyID(of: manifestKey.publicKey)
        #expect(verified.signers == [first])
        // Then a root that drops or revokes that key no longer vouches for it; one that keeps it does
        #expect(root.stillVouchesFor(verified.signers))
        let dropped = try root.successor(try signed(document(version: 2, manifestKeys: [second]), [rootKey]))
        #expect(!dropped.stillVouchesFor(verified.signers))
        let revoked = try root.successor(try signed(document(version: 2, manifestKeys: [second], revoked: [first]), [rootKey]))
        #expect(!revoked.stillVouchesFor(verified.signers))
        let kept = try root.successor(try signed(document(version: 2, manifestKeys: [manifestKey]), [rootKey]))
        #expect(kept.stillVouchesFor(verified.signers))
    }

    @Test func rootDocumentsFollowOneAnotherOnlyWithBothSignatures() throws {
        let first = try TrustedRoot(first: try signed(document(), [rootKey]))
        let newRoot = Curve25519.Signing.PrivateKey()
        let next = document(version: 2, rootKeys: [newRoot])
        #expect(try first.successor(try signed(next, [rootKey, newRoot])).document.version == 2)
        #expect(code { _ = try first.successor(try signed(next, [newRoot])) } == .untrustedRoot, "not signed by the previous root")
        #expect(code { _ = try first.successor(try signed(next, [rootKey])) } == .untrustedRoot, "not signed by its own root key")
        #expect(
            code { _ = try first.successor(try signed(document(version: 3, rootKeys: [newRoot]), [rootKey, newRoot])) } == .untrustedRoot)
        #expect(code { _ = try first.successor(try signed(next, [rootKey, newRoot, rootKey])) } == .duplicateSignature)
        #expect(
            code { _ = try TrustedRoot(first: try signed(document(), [rootKey]), pinnedKey: PublicSigningKey(newRoot.publicKey)) }
                == .untrustedRoot)
        #expect(code { _ = try TrustedRoot(first: try signed(document(rootThreshold: 2), [rootKey])) } == .invalidMetadata)
        for version in [0, Int(Int32.max) + 1, Int.max] {
            #expect(
                code { _ = try TrustedRoot(first: try signed(document(version: version), [rootKey])) } == .invalidMetadata, "v\(version)")
        }
        #expect(try TrustedRoot(first: try signed(document(version: Int(Int32.max)), [rootKey])).document.version == Int(Int32.max))
        #expect(code { _ = try TrustedRoot(first: Data(repeating: 32, count: TrustedRoot.maximumSize + 1)) } == .metadataTooLarge)
        #expect(code { _ = try TrustedRoot(first: try signed(document(), [])) } == .untrustedRoot, "an unsigned root")
        let both = document(revoked: [PublicSigningKey.keyID(of: manifestKey.publicKey)])
        #expect(code { _ = try TrustedRoot(first: try signed(both, [rootKey])) } == .invalidMetadata, "listed and revoked at once")
    }
}
