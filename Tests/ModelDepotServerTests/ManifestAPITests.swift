import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotRollouts
import ModelDepotShared
import TestSupport
import Testing

@Suite struct ManifestAPITests {
    @Test(arguments: DepotBackend.allCases) func manifestNamesTheNewestPublishedVersionWithAStrongETag(_ backend: DepotBackend) async throws
    {
        try await TestServer(backend).run { client in
            try await client.createModel("flowers")
            let app = try await client.appKey()
            _ = try await client.upload("float_classifier", to: "flowers", query: "publish=false")
            let unpublished = try await client.request(.get, "/v1/models/flowers/manifest", headers: app)
            #expect(unpublished.status == .notFound)
            #expect(unpublished.error?.message.contains("has no published version") == true)

            _ = try await client.request(.post, "/v1/admin/models/flowers/versions/1/publish")
            let first = try await client.request(.get, "/v1/models/flowers/manifest", headers: app)
            #expect(first.status == .ok)
            let manifest = try first.manifest()
            #expect(manifest.version == 1)
            #expect(
                manifest.downloadURL.hasPrefix("/v1/blobs/sha256/\(manifest.sha256)?arm=latest."),
                "the blob, and the arm signed for it: \(manifest.downloadURL)")
            #expect(manifest.tensors.outputs.map(\.name) == ["probabilities"])
            let etag = try #require(first.headers[.eTag])
            #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))

            var conditional = app
            conditional[.ifNoneMatch] = etag
            let notModified = try await client.request(.get, "/v1/models/flowers/manifest", headers: conditional)
            #expect(notModified.status == .notModified)
            #expect(notModified.headers[.eTag] == etag)
            #expect(notModified.body.readableBytes == 0)
            conditional[.ifNoneMatch] = "\"other\", W/\(etag)"
            #expect(try await client.request(.get, "/v1/models/flowers/manifest", headers: conditional).status == .notModified)

            _ = try await client.upload("int8_conv", to: "flowers")
            conditional[.ifNoneMatch] = etag
            let changed = try await client.request(.get, "/v1/models/flowers/manifest", headers: conditional)
            #expect(changed.status == .ok)
            #expect(try changed.manifest().version == 2)
            #expect(changed.headers[.eTag] != etag)

            #expect(try changed.manifest().manifestVersion > manifest.manifestVersion)

            _ = try await client.request(.post, "/v1/admin/models/flowers/versions/2/unpublish")
            let back = try await client.request(.get, "/v1/models/flowers/manifest", headers: app)
            #expect(try back.manifest().version == 1)
            #expect(try back.manifest().manifestVersion > changed.manifest().manifestVersion, "a manifest version never goes back")
            #expect(back.headers[.eTag] != etag)
        }
    }

    @Test(arguments: DepotBackend.allCases, [false, true]) func malformedDeviceAttributesAre400(_ backend: DepotBackend, live: Bool)
        async throws
    {
        try await TestServer(backend).run(live: live) { client in
            try await client.createModel("flowers")
            _ = try await client.upload("float_classifier", to: "flowers")
            var headers = try await client.appKey()
            headers[HTTPField.Name("Depot-Attributes")!] = "tier=gold,broken"
            let response = try await client.request(.get, "/v1/models/flowers/manifest", headers: headers)
            #expect(response.status == .badRequest)
            #expect(response.error?.message.contains("'broken' is not key=value") == true)
            // Refused before the catalog is read: for a model that does not exist too.
            let unknown = try await client.request(.get, "/v1/models/nothing/manifest", headers: headers)
            #expect(unknown.status == .badRequest)
            headers[HTTPField.Name("Depot-Attributes")!] = "tier=gold,beta%3Dflag=yes%2Cno"
            #expect(try await client.request(.get, "/v1/models/flowers/manifest", headers: headers).status == .ok)
        }
    }

    /// Attributes are decoded only for a rollout with a condition on one: then an escaped value
    /// matches as decoded, and a malformed header is still refused, on the fast path as on the router.
    @Test(arguments: DepotBackend.allCases, [false, true]) func anAttributeRuleMatchesTheDecodedValue(
        _ backend: DepotBackend, live: Bool
    ) async throws {
        try await TestServer(backend).run(live: live) { client in
            try await client.createModel("flowers")
            _ = try await client.upload("float_classifier", to: "flowers")
            _ = try await client.upload("int8_conv", to: "flowers")
            let gold = RolloutRuleChange(conditions: ["attributes.tier=gold"], shares: [.init(version: 1, basisPoints: 10_000)])
            #expect(try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/gold", gold).status == .ok)
            var headers = try await client.appKey()
            headers[HTTPField.Name("Depot-Installation-ID")!] = "device-1"
            for (attributes, version) in [("tier=gold", 1), ("beta=1,tier=g%6Fld", 1), ("tier=silver", 2), (nil, 2)] {
                headers[HTTPField.Name("Depot-Attributes")!] = attributes
                let response = try await client.request(.get, "/v1/models/flowers/manifest", headers: headers)
                #expect(try response.manifest().version == version, "\(attributes ?? "no attributes")")
            }
            headers[HTTPField.Name("Depot-Attributes")!] = "tier=gold,broken"
            let refused = try await client.request(.get, "/v1/models/flowers/manifest", headers: headers)
            #expect(refused.status == .badRequest)
            #expect(refused.error?.message.contains("'broken' is not key=value") == true)
        }
    }

    @Test(arguments: DepotBackend.allCases) func unknownModelIs404(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let response = try await client.request(.get, "/v1/models/nothing/manifest", headers: try await client.appKey())
            #expect(response.status == .notFound)
            #expect(response.error?.code == .notFound)
        }
    }
}
