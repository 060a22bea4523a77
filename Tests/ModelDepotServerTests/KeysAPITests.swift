import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotShared
import Synchronization
import TestSupport
import Testing

@Suite struct KeysAPITests {
    @Test(arguments: DepotBackend.allCases) func appKeyIsCreatedListedWithoutSecretAndRevoked(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            try await client.createModel("flowers")
            _ = try await client.upload("float_classifier", to: "flowers")
            let created = try await client.json(.post, "/v1/admin/keys", AccessKeyCreation(kind: .app, name: "ios app"))
            #expect(created.status == .created)
            let key = try created.decode(CreatedAccessKey.self)
            #expect(key.secret.hasPrefix("depot_\(key.id)_"))

            let listed = try await client.request(.get, "/v1/admin/keys")
            #expect(!listed.text.contains(key.secret))
            #expect(try listed.decode(AccessKeyList.self).keys.map(\.kind) == [.admin, .app])

            let app: HTTPFields = [.authorization: "Bearer \(key.secret)"]
            #expect(try await client.request(.get, "/v1/models/flowers/manifest", headers: app).status == .ok)
            #expect(try await client.request(.delete, "/v1/admin/keys/\(key.id)").status == .ok)
            #expect(try await client.request(.get, "/v1/models/flowers/manifest", headers: app).status == .unauthorized)
        }
    }

    @Test(arguments: DepotBackend.allCases) func appKeyLimitedToOneModelIsForbiddenOthersAndCannotFindTheirBlobs(_ backend: DepotBackend)
        async throws
    {
        try await TestServer(backend).run { client in
            var blobs: [String: String] = [:]
            for (name, fixture) in [("flowers", "float_classifier"), ("birds", "float_classifier_labels")] {
                try await client.createModel(name)
                blobs[name] = "/v1/blobs/sha256/" + (try await client.upload(fixture, to: name).decode(ModelVersion.self).sha256)
            }
            let limited = try await client.appKey(models: ["flowers"])
            #expect(try await client.request(.get, "/v1/models/flowers/manifest", headers: limited).status == .ok)
            let other = try await client.request(.get, "/v1/models/birds/manifest", headers: limited)
            #expect(other.status == .forbidden)
            #expect(other.error?.message.contains("may read flowers, not 'birds'") == true)

            #expect(try await client.request(.get, blobs["flowers"]!, headers: limited).status == .ok)
            let otherBlob = try await client.request(.get, blobs["birds"]!, headers: limited)
            #expect(otherBlob.status == .notFound, "a blob only another model's versions reference is unknown to this key")
            #expect(try await client.request(.head, blobs["birds"]!, headers: limited).status == .notFound)
            #expect(try await client.request(.get, blobs["birds"]!, headers: try await client.appKey()).status == .ok)

            // Once a version of its own model holds the same file, the key finds it.
            _ = try await client.upload("float_classifier_labels", to: "flowers")
            #expect(try await client.request(.get, blobs["birds"]!, headers: limited).status == .ok)
        }
    }

    @Test(arguments: DepotBackend.allCases) func anOperatorsTokenGetsARandomIDThatSaysNothingOfIt(_ backend: DepotBackend) async throws {
        let ids = Mutex<Set<String>>([])
        for _ in 0..<2 {
            try await TestServer(backend).run { client in
                let keys = try await client.request(.get, "/v1/admin/keys").decode(AccessKeyList.self).keys
                let admin = try #require(keys.first { $0.kind == .admin })
                #expect(admin.id.count == 12 && admin.id.hasPrefix("t"), "\(admin.id)")
                let hash = SHA256.hash(data: Data(TestServer.adminToken.utf8)).map { String(format: "%02x", $0) }.joined()
                #expect(!hash.contains(admin.id.dropFirst()), "the id is part of the token's hash")
                ids.withLock { _ = $0.insert(admin.id) }
                #expect(try await client.request(.get, "/v1/admin/keys").status == .ok, "the token still works")
            }
        }
        let seen = ids.withLock { $0 }
        #expect(seen.count == 2, "the same token got the same id twice: \(seen)")
    }

    @Test(arguments: DepotBackend.allCases) func theLastAdminTokenCannotBeRevoked(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let keys = try await client.request(.get, "/v1/admin/keys").decode(AccessKeyList.self).keys
            let admin = try #require(keys.first { $0.kind == .admin })
            let refused = try await client.request(.delete, "/v1/admin/keys/\(admin.id)")
            #expect(refused.status == .conflict)
            #expect(refused.error?.message.contains("last working admin token") == true)
            #expect(try await client.request(.get, "/v1/admin/keys").status == .ok)
        }
    }

    @Test(arguments: DepotBackend.allCases) func adminTokensCannotBeLimitedToModels(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let response = try await client.json(.post, "/v1/admin/keys", AccessKeyCreation(kind: .admin, models: [try ModelName("x")]))
            #expect(response.status == .badRequest)
            #expect(try await client.request(.get, "/v1/admin/keys").decode(AccessKeyList.self).keys.count == 1)
        }
    }
}
