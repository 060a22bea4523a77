import Foundation
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotServer

/// What the catalog keeps of devices: SipHash-2-4 values under the deployment's key, made once
/// and shared by every replica.
@Suite struct IdentifierKeyTests {
    /// The reference implementation's vectors: key 00 01 … 0f, message 00 01 … of each length.
    @Test func sipHashGivesTheReferenceValues() {
        let vectors: [Int: UInt64] = [
            0: 0x726f_db47_dd0e_0e31, 1: 0x74f8_39c5_93dc_67fd, 7: 0xab02_00f5_8b01_d137, 8: 0x93f5_f579_9a93_2462,
            15: 0xa129_ca61_49be_45e5, 16: 0x3f2a_cc7f_57c2_9bdb, 17: 0x699a_e9f5_2cbe_4794,
        ]
        let hash = SipHash(key: Array(0..<16))
        for (length, expected) in vectors {
            #expect(hash.hash((0..<UInt8(length)).map { $0 }) == expected, "\(length) bytes")
        }
    }

    @Test func valuesDependOnTheSecretAndReadIdsInLowerCase() throws {
        let secret = IdentifierKey.newSecret()
        let (key, same, other) = (
            try IdentifierKey(secret: secret), try IdentifierKey(secret: secret), try IdentifierKey(secret: IdentifierKey.newSecret())
        )
        for id in ["device-1", "8D1E5F0C-1B3D-4C5E-9F7A-0123456789AB", "Dévice-Ä", "İSTANBUL-1", "", "ǅ-ß-Σ"] {
            #expect(key.installation(id) == same.installation(id), "the same secret on another replica")
            #expect(key.installation(id) == key.installation(id.lowercased()), "'\(id)' as buckets read it")
            #expect(key.installation(id) != other.installation(id), "another deployment's value")
        }
        let ids = (0..<10_000).map { key.installation("device-\($0)") }
        #expect(Set(ids).count == ids.count)
        let networks = (0..<10_000).map { key.network(prefix: [10, UInt8($0 / 256), UInt8($0 % 256), 24]) }
        #expect(Set(networks).count == networks.count && networks.allSatisfy { $0 > 0 }, "63 bits, never 0")
        #expect(key.network(prefix: Array("device-1".utf8)) != key.installation("device-1"), "each use its own derived key")
        for length in [0, 16, 31, 33] {
            #expect(throws: DepotError.self, "\(length) bytes") { try IdentifierKey(secret: [UInt8](repeating: 7, count: length)) }
        }
    }

    /// One server keeps the secret in a 0600 file beside its signing keys, made on first use.
    @Test func oneServerKeepsItsSecretInAPrivateFile() async throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("depot-identifiers-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: storage, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: storage) }
        let files = SigningKeyFiles(storage: storage)
        #expect(files.storedIdentifierSecret() == nil)
        let first = try await files.identifierSecret()
        #expect(first.count == IdentifierKey.secretLength)
        #expect(try await SigningKeyFiles(storage: storage).identifierSecret() == first, "read back, not made again")
        let mode = try FileManager.default.attributesOfItem(atPath: files.directory + "/identifiers.key")[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    /// Replicas that start at once on an empty database all get the one secret.
    @Test func replicasShareOneSecret() async throws {
        let location = try PostgresLocation(url: try await TestPostgres.freshDatabase())
        let replicas = try await withThrowingTaskGroup(of: PostgresModelCatalog.self) { group in
            for _ in 0..<4 { group.addTask { try await PostgresModelCatalog.forTest(location) } }
            var replicas: [PostgresModelCatalog] = []
            for try await replica in group { replicas.append(replica) }
            return replicas
        }
        defer { for replica in replicas { replica.close() } }
        let secrets = try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for replica in replicas { group.addTask { try await replica.identifierSecret() } }
            var secrets: Set<[UInt8]> = []
            for try await secret in group { secrets.insert(secret) }
            return secrets
        }
        #expect(secrets.count == 1 && secrets.first?.count == IdentifierKey.secretLength)
    }
}
