import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotShared
import TestSupport
import Testing

@Suite struct ModelsAPITests {
    @Test(arguments: DepotBackend.allCases) func modelIsCreatedListedShownAndDeleted(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let created = try await client.json(
                .post, "/v1/admin/models",
                ModelCreation(name: try ModelName("flowers"), description: "Flowers", tags: ["vision"]))
            #expect(created.status == .created)
            let list = try await client.request(.get, "/v1/admin/models").decode(ModelList.self)
            #expect(list.models.map(\.name.rawValue) == ["flowers"])
            let shown = try await client.request(.get, "/v1/admin/models/flowers").decode(ModelSummary.self)
            #expect(shown.description == "Flowers")
            #expect(shown.tags == ["vision"])
            #expect(shown.versionCount == 0)
            #expect(try await client.request(.delete, "/v1/admin/models/flowers").status == .noContent)
            #expect(try await client.request(.get, "/v1/admin/models/flowers").status == .notFound)
        }
    }

    @Test(arguments: DepotBackend.allCases) func creatingAModelTwiceIsAConflictThatKeepsTheFirst(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            try await client.json(.post, "/v1/admin/models", ModelCreation(name: try ModelName("flowers"), description: "first"))
            let again = try await client.json(
                .post, "/v1/admin/models", ModelCreation(name: try ModelName("flowers"), description: "second"))
            #expect(again.status == .conflict)
            #expect(again.error?.code == .alreadyExists)
            #expect(try await client.request(.get, "/v1/admin/models/flowers").decode(ModelSummary.self).description == "first")
        }
    }

    @Test(arguments: DepotBackend.allCases) func badNamesAndMalformedJSONAre400(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let badName = try await client.request(.post, "/v1/admin/models", body: ByteBuffer(string: #"{"name": "Bad Name"}"#))
            #expect(badName.status == .badRequest)
            #expect(badName.error?.code == .badRequest)
            #expect(badName.error?.message.contains("Model name 'Bad Name' is not allowed") == true)

            let malformed = try await client.request(.post, "/v1/admin/models", body: ByteBuffer(string: #"{"name": "#))
            #expect(malformed.status == .badRequest)
            #expect(malformed.error?.message.contains("not valid JSON") == true)

            let missing = try await client.request(.post, "/v1/admin/models", body: ByteBuffer(string: #"{"description": "x"}"#))
            #expect(missing.error?.message == "The JSON body lacks the field 'name'.")

            let pathName = try await client.request(.get, "/v1/admin/models/UPPER")
            #expect(pathName.status == .badRequest)
            #expect(pathName.error?.code == .invalidName)

            let traversal = try await client.request(.get, "/v1/admin/models/..%2F..%2Fdepot.sqlite")
            #expect(traversal.status == .badRequest)
            #expect(traversal.error?.code == .invalidName)
            #expect(try await client.request(.get, "/v1/admin/models").decode(ModelList.self).models.isEmpty)
        }
    }

    @Test(arguments: DepotBackend.allCases) func deletingAModelWithVersionsNeedsForceAndThenRemovesItsBlobs(_ backend: DepotBackend)
        async throws
    {
        try await TestServer(backend).run { client in
            try await client.createModel("flowers")
            #expect(try await client.upload("float_classifier", to: "flowers").status == .created)
            let refused = try await client.request(.delete, "/v1/admin/models/flowers")
            #expect(refused.status == .conflict)
            #expect(refused.error?.message.contains("has 1 version(s)") == true)
            #expect(try await client.storedBlobs().count == 1)

            #expect(try await client.request(.delete, "/v1/admin/models/flowers?force=true").status == .noContent)
            #expect(try await client.storedBlobs().isEmpty)
        }
    }

    @Test(arguments: DepotBackend.allCases) func credentialsAreCheckedOnEveryAPIRoute(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let none = try await client.request(.get, "/v1/admin/models", headers: [:])
            #expect(none.status == .unauthorized)
            #expect(none.headers[.wwwAuthenticate] == "Bearer realm=\"ModelDepot\"")
            let wrong = try await client.request(
                .get, "/v1/admin/models", headers: [.authorization: "Bearer depot_000000000000_" + String(repeating: "0", count: 64)])
            #expect(wrong.status == .unauthorized)
            let notBearer = try await client.request(.get, "/v1/admin/models", headers: [.authorization: "Basic abc"])
            #expect(notBearer.status == .unauthorized)

            let app = try await client.appKey()
            let forbidden = try await client.request(.get, "/v1/admin/models", headers: app)
            #expect(forbidden.status == .forbidden)
            #expect(forbidden.error?.code == .forbidden)
            #expect(try await client.request(.get, "/healthz", headers: [:]).status == .ok)
        }
    }
}
