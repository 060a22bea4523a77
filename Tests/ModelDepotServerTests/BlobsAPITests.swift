import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotShared
import TestSupport
import Testing

@Suite struct BlobsAPITests {
    /// Uploads the labelled classifier and returns its blob URI, the file's bytes and an app key.
    func prepare(_ client: TestServer.Client) async throws -> (uri: String, bytes: [UInt8], key: HTTPFields) {
        try await client.createModel("flowers")
        let version = try await client.upload("float_classifier_labels", to: "flowers").decode(ModelVersion.self)
        return ("/v1/blobs/sha256/\(version.sha256)", try Fixtures.bytes("float_classifier_labels"), try await client.appKey())
    }

    func get(
        _ client: TestServer.Client, _ uri: String, _ key: HTTPFields, _ extra: [HTTPField.Name: String] = [:],
        method: HTTPRequest.Method = .get
    ) async throws -> TestServer.Response {
        var headers = key
        for (name, value) in extra { headers[name] = value }
        return try await client.request(method, uri, headers: headers)
    }

    @Test(arguments: DepotBackend.allCases) func fullBlobIsImmutableAndCacheable(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let (uri, bytes, key) = try await prepare(client)
            let response = try await get(client, uri, key)
            #expect(response.status == .ok)
            #expect(Array(response.body.readableBytesView) == bytes)
            #expect(response.headers[.eTag] == "\"\(uri.split(separator: "/").last!)\"")
            #expect(response.headers[.cacheControl] == "public, max-age=31536000, immutable")
            #expect(response.headers[.acceptRanges] == "bytes")
            #expect(response.headers[.contentEncoding] == nil)
            #expect(response.headers[.contentLength] == "\(bytes.count)")
        }
    }

    @Test(arguments: DepotBackend.allCases) func singleRangesAre206WithContentRange(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let (uri, bytes, key) = try await prepare(client)
            let n = bytes.count
            for (range, expected) in [
                ("bytes=0-3", 0...3), ("bytes=100-", 100...(n - 1)), ("bytes=-5", (n - 5)...(n - 1)),
                ("bytes=10-99999", 10...(n - 1)),
            ] {
                let response = try await get(client, uri, key, [.range: range])
                #expect(response.status == .partialContent, "\(range)")
                #expect(response.headers[.contentRange] == "bytes \(expected.lowerBound)-\(expected.upperBound)/\(n)", "\(range)")
                #expect(Array(response.body.readableBytesView) == Array(bytes[expected]), "\(range)")
            }
        }
    }

    @Test(arguments: DepotBackend.allCases) func rangePastTheEndIs416AndMultipleRangesGetTheWholeFile(_ backend: DepotBackend) async throws
    {
        try await TestServer(backend).run { client in
            let (uri, bytes, key) = try await prepare(client)
            let past = try await get(client, uri, key, [.range: "bytes=\(bytes.count)-"])
            #expect(past.status == .rangeNotSatisfiable)
            #expect(past.headers[.contentRange] == "bytes */\(bytes.count)")
            #expect(past.error?.code == .rangeNotSatisfiable)
            let multiple = try await get(client, uri, key, [.range: "bytes=0-1,5-6"])
            #expect(multiple.status == .ok)
            #expect(multiple.body.readableBytes == bytes.count)
        }
    }

    @Test(arguments: DepotBackend.allCases) func ifRangeWithAnotherTagGetsTheWholeFile(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let (uri, bytes, key) = try await prepare(client)
            let tag = "\"\(uri.split(separator: "/").last!)\""
            let stale = try await get(client, uri, key, [.range: "bytes=0-3", .ifRange: "\"0000\""])
            #expect(stale.status == .ok)
            #expect(stale.body.readableBytes == bytes.count)
            let weak = try await get(client, uri, key, [.range: "bytes=0-3", .ifRange: "W/\(tag)"])
            #expect(weak.status == .ok)
            let current = try await get(client, uri, key, [.range: "bytes=0-3", .ifRange: tag])
            #expect(current.status == .partialContent)
        }
    }

    @Test(arguments: DepotBackend.allCases) func headAnswersHeadersOnly(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let (uri, bytes, key) = try await prepare(client)
            let response = try await get(client, uri, key, method: .head)
            #expect(response.status == .ok)
            #expect(response.headers[.contentLength] == "\(bytes.count)")
            #expect(response.body.readableBytes == 0)
        }
    }

    @Test(arguments: DepotBackend.allCases) func badAndUnknownDigestsAre400And404(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let (_, _, key) = try await prepare(client)
            #expect(try await get(client, "/v1/blobs/sha256/abc", key).status == .badRequest)
            #expect(try await get(client, "/v1/blobs/sha256/" + String(repeating: "A", count: 64), key).status == .badRequest)
            #expect(try await get(client, "/v1/blobs/sha256/..%2F..%2Fdepot.sqlite", key).status == .badRequest)
            let unknown = try await get(client, "/v1/blobs/sha256/" + String(repeating: "0", count: 64), key)
            #expect(unknown.status == .notFound)
            #expect(try await get(client, "/v1/blobs/sha256/" + String(repeating: "0", count: 64), [:]).status == .unauthorized)
        }
    }
}
