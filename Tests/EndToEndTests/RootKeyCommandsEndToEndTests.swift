import Crypto
import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// `depot keys root generate|init|show` and `depot keys rotate` against a real server: what
/// they publish, and every refusal with its exit code.
@Suite struct RootKeyCommandsEndToEndTests {
    @Test func rootKeysArePublishedRotatedAndRefusedWithReasons() async throws {
        let scratch = try Scratch()
        let server = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        let env = server.environment
        let rootKey = scratch.path("root.key")

        let generated = try await Command.depot(["keys", "root", "generate", "--out", rootKey, "--json"], environment: env)
        #expect(generated.status == 0, "\(generated.error)")
        let publicKey = try generated.decode(PublicSigningKey.self)
        #expect(try FileManager.default.attributesOfItem(atPath: rootKey)[.posixPermissions] as? Int == 0o600)
        let original = try String(contentsOfFile: rootKey, encoding: .utf8)
        let overwrite = try await Command.depot(["keys", "root", "generate", "--out", rootKey], environment: env)
        #expect(overwrite.status == 1)
        #expect(overwrite.error.contains("An existing key file is never overwritten"))
        #expect(try String(contentsOfFile: rootKey, encoding: .utf8) == original)

        let early = try await Command.depot(["keys", "rotate", "--root-key", rootKey], environment: env)
        #expect(early.status == 1)
        #expect(early.error.contains("has no root document yet; publish v1 with 'depot keys root init"))
        try "not a key".write(toFile: scratch.path("junk.key"), atomically: true, encoding: .utf8)
        let junk = try await Command.depot(["keys", "root", "init", "--root-key", scratch.path("junk.key")], environment: env)
        #expect(junk.status == 1)
        #expect(junk.error.contains("is not an Ed25519 private key file"))
        let days = try await Command.depot(["keys", "root", "init", "--root-key", rootKey, "--expires-in-days", "0"], environment: env)
        #expect(days.status == 1)
        #expect(days.error.contains("--expires-in-days must be between 1 and 3650, not 0"))
        let before =
            try await JSONSerialization.jsonObject(with: try Command.depot(["keys", "root", "show", "--json"], environment: env).output)
            as? [String: Any]
        #expect(before?["signing"] != nil && before?["root"] == nil)

        let initialized = try await Command.depot(["keys", "root", "init", "--root-key", rootKey, "--json"], environment: env)
        #expect(initialized.status == 0, "\(initialized.error)")
        let first = try initialized.decode(RootDocument.self)
        #expect(first.version == 1 && first.rootKeys == [publicKey] && first.revokedKeys.isEmpty)
        let again = try await Command.depot(["keys", "root", "init", "--root-key", rootKey], environment: env)
        #expect(again.status == 1)
        #expect(again.error.contains("has root document v1 already"))

        let stranger = scratch.path("stranger.key")
        try await Command.depot(["keys", "root", "generate", "--out", stranger], environment: env).succeeded()
        let wrong = try await Command.depot(["keys", "rotate", "--root-key", stranger], environment: env)
        #expect(wrong.status == 1)
        #expect(wrong.error.contains("which is not a root key of root document v1"))

        let rotated = try await Command.depot(["keys", "rotate", "--root-key", rootKey, "--json"], environment: env)
        #expect(rotated.status == 0, "\(rotated.error)")
        let second = try rotated.decode(RootDocument.self)
        #expect(second.version == 2 && second.rootKeys == first.rootKeys)
        #expect(second.revokedKeys == first.manifestKeys.map(\.keyid))
        #expect(second.manifestKeys != first.manifestKeys)
        let shown = try await Command.depot(["keys", "root", "show"], environment: env)
        #expect(shown.text.contains("Active manifest key: \(second.manifestKeys[0].keyid)"))
        #expect(shown.text.contains("Newest: root document v2"))

        let renewed = try await Command.depot(
            ["keys", "rotate", "--root-key", rootKey, "--keep-signing-key", "--expires-in-days", "10", "--json"],
            environment: env)
        #expect(try renewed.decode(RootDocument.self).manifestKeys == second.manifestKeys)
        await #expect(
            try Command.depot(["keys", "root", "show"], environment: env).text.contains("Warning: it expires in less than 30 days"))

        // A compromised server offers a "newest" root document that lists the operator's key and
        // the attacker's, signed by the attacker only: rotate must not sign on top of it.
        try await server.stop(signal: SIGTERM)
        let attacker = Curve25519.Signing.PrivateKey()
        let forged = RootDocument(
            version: 4, issued: Date(), expires: Date().addingTimeInterval(86_400),
            rootKeys: [publicKey, PublicSigningKey(attacker.publicKey)], manifestKeys: second.manifestKeys)
        let envelope = try SignedEnvelope(signing: forged, with: [attacker]).encoded()
        let insert = try await Program.run(
            "python3",
            [
                "-c",
                """
                import sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                db.execute("INSERT INTO root_document (version, envelope, created_at) VALUES (4, ?, '2026-01-01 00:00:00.000')", (bytes.fromhex(sys.argv[2]),))
                db.commit()
                """, scratch.path("storage/depot.sqlite"), envelope.map { String(format: "%02x", $0) }.joined(),
            ])
        #expect(insert.status == 0, "\(insert.error)")
        let tampered = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        let refused = try await Command.depot(["keys", "rotate", "--root-key", rootKey], environment: tampered.environment)
        #expect(refused.status == 1)
        #expect(refused.error.contains("was not signed by it: the server may be compromised"))
        await #expect(
            try Command.depot(["keys", "root", "show", "--json"], environment: tampered.environment).text.contains("\"version\" : 4"),
            "nothing was published on top of it")

        try await tampered.stop(signal: SIGTERM)
        let offline = try await Command.depot(["keys", "rotate", "--root-key", rootKey], environment: tampered.environment)
        #expect(offline.status == 2)
        #expect(offline.error.contains("Could not reach the server"))
    }

    @Test func aSettingOutsideItsRangeIsRefusedAtStartNamingItsFlag() async throws {
        let scratch = try Scratch()
        for (flag, environment, message) in [
            (
                ["--manifest-lifetime", "30"], [String: String](),
                "The manifest lifetime (--manifest-lifetime, DEPOT_MANIFEST_LIFETIME) must be 60 to 31536000 seconds (365 days), not 30."
            ),
            (
                ["--manifest-lifetime", "9223372036854775807"], [:],
                "(--manifest-lifetime, DEPOT_MANIFEST_LIFETIME) must be 60 to 31536000 seconds (365 days), not 9223372036854775807."
            ),
            ([], ["DEPOT_MANIFEST_LIFETIME": "a week"], "DEPOT_MANIFEST_LIFETIME='a week' is not a whole number."),
            // Every refused setting names its flag and its variable.
            (["--port", "70000"], [:], "The port (--port, DEPOT_PORT) must be 0 to 65535, not 70000."),
            (
                [], ["DEPOT_MAX_UPLOAD_SIZE": "0"],
                "(--max-upload-size, DEPOT_MAX_UPLOAD_SIZE) must be 1 to 1099511627776 bytes (1 TiB), not 0."
            ),
            (
                ["--max-upload-size", "9223372036854775807"], [:],
                "(--max-upload-size, DEPOT_MAX_UPLOAD_SIZE) must be 1 to 1099511627776 bytes (1 TiB), not 9223372036854775807."
            ),
            (["--max-connections", "0"], [:], "(--max-connections, DEPOT_MAX_CONNECTIONS) must be at least 1, not 0."),
            (["--max-head-size", "10"], [:], "(--max-head-size, DEPOT_MAX_HEAD_SIZE) must be 1024 to 1048576 bytes, not 10."),
            (["--log-level", "loud"], [:], "Log level 'loud' (--log-level, DEPOT_LOG_LEVEL) is unknown"),
        ] {
            let serve = try await Command.depot(
                ["serve", "--port", "0", "--storage", scratch.path("storage")] + flag, environment: environment)
            #expect(serve.status == 1)
            #expect(serve.error.contains(message), "\(serve.error)")
        }
    }
}
