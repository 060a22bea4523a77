import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotShared
import Testing

@Suite struct KeysAPITests {
    @Test func appKeyIsCreatedListedWithoutSecretAndRevoked() async throws {
        try await TestServer().run { client in
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

    @Test func appKeyLimitedToOneModelIsForbiddenOthers() async throws {
        try await TestServer().run { client in
            for name in ["flowers", "birds"] {
                try await client.createModel(name)
                _ = try await client.upload("float_classifier", to: name)
            }
            let limited = try await client.appKey(models: ["flowers"])
            #expect(try await client.request(.get, "/v1/models/flowers/manifest", headers: limited).status == .ok)
            let other = try await client.request(.get, "/v1/models/birds/manifest", headers: limited)
            #expect(other.status == .forbidden)
            #expect(other.error?.message.contains("may read flowers, not 'birds'") == true)
        }
    }

    @Test func theLastAdminTokenCannotBeRevoked() async throws {
        try await TestServer().run { client in
            let keys = try await client.request(.get, "/v1/admin/keys").decode(AccessKeyList.self).keys
            let admin = try #require(keys.first { $0.kind == .admin })
            let refused = try await client.request(.delete, "/v1/admin/keys/\(admin.id)")
            #expect(refused.status == .conflict)
            #expect(refused.error?.message.contains("last working admin token") == true)
            #expect(try await client.request(.get, "/v1/admin/keys").status == .ok)
        }
    }

    @Test func adminTokensCannotBeLimitedToModels() async throws {
        try await TestServer().run { client in
            let response = try await client.json(.post, "/v1/admin/keys", AccessKeyCreation(kind: .admin, models: [try ModelName("x")]))
            #expect(response.status == .badRequest)
            #expect(try await client.request(.get, "/v1/admin/keys").decode(AccessKeyList.self).keys.count == 1)
        }
    }
}
