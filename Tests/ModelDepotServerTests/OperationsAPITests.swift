import Foundation
import Hummingbird
import HummingbirdTesting
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotServer

@Suite struct OperationsAPITests {
    @Test(arguments: DepotBackend.allCases) func healthReadinessAndMetricsAnswerWithoutAKey(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            #expect(try await client.request(.get, "/healthz", headers: [:]).text == #"{"status":"ok","version":"\#(modelDepotVersion)"}"#)
            #expect(try await client.request(.get, "/readyz", headers: [:]).status == .ok)
            try await client.createModel("flowers")
            _ = try await client.upload("float_classifier", to: "flowers")
            var conditional = try await client.appKey()
            let etag = try await client.request(.get, "/v1/models/flowers/manifest", headers: conditional).headers[.eTag]
            conditional[.ifNoneMatch] = etag
            for _ in 0..<3 { _ = try await client.request(.get, "/v1/models/flowers/manifest", headers: conditional) }

            let metrics = try await client.request(.get, "/metrics", headers: [:]).text
            #expect(metrics.contains(#"depot_http_requests_total{route="/v1/models/{name}/manifest",method="GET",status="304"} 3"#))
            #expect(metrics.contains(#"depot_uploads_total{result="stored"} 1"#))
            #expect(metrics.contains("depot_manifest_not_modified_ratio 0.75"))
            #expect(metrics.contains(#"depot_build_info{version="\#(modelDepotVersion)"} 1"#))
        }
    }

    @Test func readinessFailsWhenStorageTakesNoWrites() async throws {
        let server = try await TestServer()
        try await server.run { client in
            try FileManager.default.removeItem(at: client.storage.appendingPathComponent("tmp"))
            let response = try await client.request(.get, "/readyz", headers: [:])
            #expect(response.status == .serviceUnavailable)
            #expect(response.error?.message.contains("does not take writes") == true)
            #expect(response.error?.message.contains(client.storage.path) == false, "no path in a response body")
        }
    }

    /// Every route the router knows appears under `paths:` in openapi.yaml, and nothing else does.
    @Test func openAPIDocumentDescribesEveryRoute() async throws {
        let server = try await TestServer()
        try await server.run { client in
            let document = try await client.request(.get, "/openapi.yaml", headers: [:]).text
            let documented = Set(
                document.split(separator: "\n").compactMap { line -> String? in
                    guard line.hasPrefix("  /"), line.hasSuffix(":") else { return nil }
                    return String(line.dropFirst(2).dropLast())
                })
            let storage = client.storage.path
            let catalog = try SQLiteModelCatalog(path: storage + "/depot.sqlite")
            let blobs = try FileSystemBlobStore(root: storage)
            let deployment = Deployment(
                catalog: catalog, blobs: blobs, signingKeys: SigningKeyFiles(storage: storage),
                collectionLock: LocalBlobCollectionLock(), guardLock: LocalReplicaWorkLock(),
                patchLock: LocalReplicaWorkLock(), changes: nil)
            let identifiers = try IdentifierKey(secret: IdentifierKey.newSecret())
            let routes = buildRouter(
                configuration: server.configuration, deployment: deployment,
                index: BlobIndex(catalog: catalog, blobs: blobs),
                signer: try await ManifestSigner(keys: SigningKeyFiles(storage: storage), catalog: catalog),
                usage: UsageCounter(identifiers: identifiers, clock: { Date() }), identifiers: identifiers, clock: { Date() },
                requestLog: RequestLog(isEnabled: false), templates: try await ConsoleController.loadTemplates()
            ).routes.paths
                // The console is HTML for people, not API; ConsoleTests covers its routes.
                .filter { !$0.hasPrefix("/console") }
            #expect(routes.count >= 14)
            #expect(documented.subtracting(routes).isEmpty, "documented but not served")
            #expect(routes.subtracting(documented).isEmpty, "served but not documented")
        }
    }
}
