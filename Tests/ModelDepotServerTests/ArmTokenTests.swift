import Crypto
import Foundation
import ModelDepotRollouts
import ModelDepotShared
import Testing

@testable import ModelDepotServer

/// The arm tokens the server signs into download URLs: only a token it made, for that blob,
/// names an arm; everything else, however malformed, is `unknown`.
@Suite struct ArmTokenTests {
    static let blob = String(repeating: "ab", count: 32)
    static let other = String(repeating: "cd", count: 32)
    let key = ArmToken.Key(signingKey: Curve25519.Signing.PrivateKey())

    /// The text of the arm a download with `query` counts for.
    func arm(_ query: String?, blob: String = blob, keys: [ArmToken.Key]? = nil) -> String {
        ArmToken.arm(inQuery: query.map { $0[...] }, sha256: blob[...], keys: keys ?? [key]).stored
    }

    @Test func aTokenTheServerMadeNamesItsArmForItsBlobOnly() {
        let token = ArmToken.make(arm: .rule(id: "r-1a2b3c4d"), sha256: Self.blob, key: key)
        #expect(token.hasPrefix("rule:r-1a2b3c4d.") && token.utf8.count == "rule:r-1a2b3c4d.".utf8.count + 22)
        #expect(arm("arm=\(token)") == "rule:r-1a2b3c4d")
        #expect(arm("x=1&arm=\(token)&y=2#fragment") == "rule:r-1a2b3c4d")
        #expect(arm("arm=\(token)", blob: Self.other) == "unknown", "a token is for one blob")
        #expect(
            arm("arm=\(token)", keys: [ArmToken.Key(signingKey: Curve25519.Signing.PrivateKey())]) == "unknown",
            "another server's key")
    }

    @Test func anArmWithCharactersOutsideTheURLSafeSetRoundTrips() {
        let odd = "rule:r 1/ü&=.%"
        let token = ArmToken.make(arm: CountedArm(stored: odd), sha256: Self.blob, key: key)
        #expect(!token.contains(" ") && !token.contains("&") && !token.contains("="))
        #expect(arm("arm=\(token)") == odd)
    }

    @Test func aForgedOrTamperedTokenCountsAsUnknown() {
        let token = ArmToken.make(arm: .rule(id: "r-1"), sha256: Self.blob, key: key)
        let mac = token.split(separator: ".").last!
        let flipped = String(mac.dropLast()) + (mac.last == "A" ? "B" : "A")
        let forged = [
            nil, "", "arm", "arm=", "arm=rule:r-1", "arm=rule:r-2.\(mac)", "arm=rule:r-1.\(flipped)", "arm=rule:r-1.\(mac)x",
            "arm=rule%3Ar-1%.\(mac)", "arm=rule%zz.\(mac)", "Arm=\(token)", "xarm=\(token)", "arm=\(token.dropFirst())",
            "arm=" + String(repeating: "a", count: 300) + ".\(mac)",
        ]
        for query in forged {
            #expect(arm(query) == "unknown", "\(query ?? "no query")")
        }
        #expect(arm("arm=rule%3Ar-1.\(mac)") == "rule:r-1", "an escape of a kept character decodes to the same arm")
    }

    @Test func tokensOfThePreviousKeyStillCount() {
        let previous = ArmToken.Key(signingKey: Curve25519.Signing.PrivateKey())
        let token = ArmToken.make(arm: .default, sha256: Self.blob, key: previous)
        #expect(arm("arm=\(token)", keys: [key, previous]) == "default")
        #expect(arm("arm=\(token)", keys: [key]) == "unknown")
    }

    @Test func randomQueriesNeverNameAnArm() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("arm=.&%#:-_~rule0123456789abcdefABCDEF ü\u{0}\t/?".unicodeScalars)
        for _ in 0..<10_000 {
            let length = Int.random(in: 0...80, using: &generator)
            let query = String(String.UnicodeScalarView((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
            #expect(arm(query) == "unknown", "\(query)")
        }
    }
}

/// Arm tokens through ``ManifestSigner``: made with the shared online key, so that replicas
/// count each other's, and still counted after a rotation by a replica that went through it.
@Suite struct ArmTokenSigningTests {
    static let blob = ArmTokenTests.blob[...]

    func root(_ version: Int, rootKey: Curve25519.Signing.PrivateKey, manifestKey: PublicSigningKey) throws -> Data {
        let document = RootDocument(
            version: version, issued: Date(), expires: Date().addingTimeInterval(86_400),
            rootKeys: [PublicSigningKey(rootKey.publicKey)], manifestKeys: [manifestKey], revokedKeys: [])
        return try SignedEnvelope(signing: document, with: [rootKey]).encoded()
    }

    @Test func replicasCountEachOthersTokensAndARotationKeepsTheOldOnesCounting() async throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("depot-arm-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: storage) }
        try FileManager.default.createDirectory(atPath: storage, withIntermediateDirectories: true)
        let catalog = try SQLiteModelCatalog(path: storage + "/depot.sqlite")
        let first = try await ManifestSigner(keys: SigningKeyFiles(storage: storage), catalog: catalog)
        let second = try await ManifestSigner(keys: SigningKeyFiles(storage: storage), catalog: catalog)
        func query(_ token: String) -> Substring { "arm=\(token)"[...] }

        let before = first.armToken(arm: .rule(id: "r-1"), sha256: String(Self.blob))
        #expect(second.countedArm(query: query(before), sha256: Self.blob) == .rule(id: "r-1"))

        let rootKey = Curve25519.Signing.PrivateKey()
        _ = try await first.accept(try root(1, rootKey: rootKey, manifestKey: first.status.active), catalog: catalog, now: Date())
        #expect(try await first.reload(catalog: catalog), "the first root document changes what signs")
        #expect(
            first.armToken(arm: .rule(id: "r-1"), sha256: String(Self.blob)) == before,
            "a root document that keeps the key keeps the tokens")
        let pending = try await first.makePendingKey()
        #expect(try await !first.reload(catalog: catalog), "a pending key alone signs nothing")
        _ = try await first.accept(try root(2, rootKey: rootKey, manifestKey: pending), catalog: catalog, now: Date())
        #expect(try await first.reload(catalog: catalog))
        let after = first.armToken(arm: .rule(id: "r-1"), sha256: String(Self.blob))
        #expect(after != before)
        #expect(
            first.countedArm(query: query(before), sha256: Self.blob) == .rule(id: "r-1"), "a manifest fetched just before the rotation")
        #expect(first.countedArm(query: query(after), sha256: Self.blob) == .rule(id: "r-1"))

        #expect(second.countedArm(query: query(after), sha256: Self.blob) == .unknown, "the other replica has not seen the rotation yet")
        #expect(try await second.reload(catalog: catalog))
        #expect(second.countedArm(query: query(after), sha256: Self.blob) == .rule(id: "r-1"))
        #expect(second.countedArm(query: query(before), sha256: Self.blob) == .rule(id: "r-1"))

        let restarted = try await ManifestSigner(keys: SigningKeyFiles(storage: storage), catalog: catalog)
        #expect(restarted.countedArm(query: query(after), sha256: Self.blob) == .rule(id: "r-1"))
        #expect(restarted.countedArm(query: query(before), sha256: Self.blob) == .unknown, "the replaced key is gone after a restart")
    }
}
