import Crypto
import Foundation
import ModelDepotShared

/// The signing half of scripts/bench/signing: Ed25519 through swift-crypto, and the SDK's whole
/// check of a signed manifest (envelope, signature, payload, expiry, version).
enum SigningBenchmark {
    static func run(seconds: Double) throws {
        let key = Curve25519.Signing.PrivateKey()
        let message = Data(repeating: 7, count: 1_100)
        let signature = try key.signature(for: message)
        print(String(format: "ed25519 sign/s %.0f", try rate(seconds) { _ = try key.signature(for: message) }))
        print(String(format: "ed25519 verify/s %.0f", try rate(seconds) { _ = key.publicKey.isValidSignature(signature, for: message) }))

        let rootKey = Curve25519.Signing.PrivateKey()
        let now = Date()
        let root = try TrustedRoot(
            first: try SignedEnvelope(
                signing: RootDocument(
                    version: 1, issued: now, expires: now.addingTimeInterval(86_400), rootKeys: [PublicSigningKey(rootKey.publicKey)],
                    manifestKeys: [PublicSigningKey(key.publicKey)]), with: [rootKey]
            ).encoded())
        let tensor = try JSONDecoder().decode(
            TFLiteTensor.self,
            from: Data(
                """
                {"index": 0, "name": "image", "type": "float32", "shape": [1, 224, 224, 3], "shapeSignature": [1, 224, 224, 3],
                 "quantization": {"scales": [], "zeroPoints": [], "quantizedDimension": 0}}
                """.utf8))
        let manifest = ModelManifest(
            model: try ModelName("flowers"), version: 3, sha256: String(repeating: "a", count: 64), size: 4_000_000,
            downloadURL: "/v1/blobs/sha256/" + String(repeating: "a", count: 64),
            tensors: .init(inputs: [tensor], outputs: [tensor]), arm: "rule:canary",
            manifestVersion: 12, issued: now, expires: now.addingTimeInterval(3600))
        let envelope = try SignedEnvelope(signing: manifest, with: [key]).encoded()
        let name = try ModelName("flowers")
        print(
            String(
                format: "sign manifest/s %.0f (%d-byte envelope)",
                try rate(seconds) {
                    _ = try SignedEnvelope(signing: manifest, with: [key]).encoded()
                }, envelope.count))
        print(
            String(
                format: "verify manifest/s %.0f",
                try rate(seconds) {
                    _ = try root.verifyManifest(envelope, for: name, now: now, clockSkew: 300, minimumVersion: 12)
                }))
    }

    /// Calls per second of `body`, run for about `seconds`.
    private static func rate(_ seconds: Double, _ body: () throws -> Void) throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        var calls = 0
        while true {
            for _ in 0..<100 { try body() }
            calls += 100
            let elapsed = clock.now - start
            let value = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            if value >= seconds { return Double(calls) / value }
        }
    }
}
