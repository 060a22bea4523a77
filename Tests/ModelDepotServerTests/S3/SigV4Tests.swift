import Foundation
import TestSupport
import Testing

@testable import ModelDepotServer

/// Our SigV4 signatures equal botocore's on the same requests (`scripts/s3/botocore_sign.py`):
/// the same canonical request, so the same signature, for every kind of request the blob store sends.
@Suite struct SigV4Tests {
    static let instant = Date(timeIntervalSince1970: 1_800_000_123)

    func client(endpoint: String?, token: String? = nil, region: String = "us-east-1") throws -> S3Client {
        var environment = [
            "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            "AWS_REGION": region,
        ]
        if let endpoint { environment["AWS_ENDPOINT_URL_S3"] = endpoint }
        if let token { environment["AWS_SESSION_TOKEN"] = token }
        return S3Client(location: try S3Location(url: "s3://depot-models/prod/eu", environment: environment), clock: { Self.instant })
    }

    struct Case {
        let client: S3Client
        let method: String
        let key: String?
        var query: [(String, String)] = []
        var headers: [(String, String)] = []
        var payload = SigV4.unsignedPayload
    }

    @Test func signaturesEqualBotocoresForEveryRequestTheStoreSends() async throws {
        let local = try client(endpoint: "http://127.0.0.1:9000")
        let aws = try client(endpoint: nil, token: "FQoGZXIvYXdzEJr//////////wEaDOa+token=", region: "eu-central-1")
        let hash = String(repeating: "ab", count: 32)
        let cases = [
            Case(client: local, method: "HEAD", key: "prod/eu/blobs/sha256/\(hash)", payload: SigV4.emptyPayload),
            Case(client: local, method: "GET", key: "prod/eu/blobs/sha256/\(hash)", headers: [("Range", "bytes=0-1048575")]),
            Case(client: aws, method: "GET", key: "prod/eu/blobs/sha256/\(hash)", headers: [("Range", "bytes=100-")]),
            Case(
                client: local, method: "GET", key: nil,
                query: [("list-type", "2"), ("prefix", "prod/eu/blobs/"), ("continuation-token", "1/a+b=c")],
                payload: SigV4.emptyPayload),
            Case(
                client: local, method: "POST", key: "prod/eu/uploads/ü ñ (1).tflite", query: [("uploads", "")], payload: SigV4.emptyPayload),
            Case(client: aws, method: "PUT", key: "prod/eu/uploads/x", query: [("partNumber", "2"), ("uploadId", "VXBsb2FkIElE+/=")]),
            Case(client: local, method: "POST", key: "prod/eu/uploads/x", query: [("uploadId", "abc")], payload: hash),
            Case(
                client: local, method: "PUT", key: "prod/eu/blobs/sha256/\(hash)",
                headers: [("x-amz-copy-source", "/depot-models/prod/eu/uploads/x"), ("X-Amz-Meta-Note", "  two   spaces ")],
                payload: SigV4.emptyPayload),
            Case(client: aws, method: "DELETE", key: "prod/eu/uploads/x", query: [("uploadId", "abc")], payload: SigV4.emptyPayload),
        ]
        var specs: [[String: Any]] = []
        var ours: [String] = []
        for item in cases {
            let signed = item.client.signedRequest(
                item.method, key: item.key, query: item.query, headers: item.headers, payloadHash: item.payload)
            let credentials = item.client.location.credentials
            specs.append([
                "method": item.method, "url": signed.url, "headers": item.headers.map { [$0.0, $0.1] },
                "payload": item.payload == SigV4.unsignedPayload ? "unsigned" : item.payload,
                "timestamp": Self.instant.timeIntervalSince1970, "access": credentials.accessKeyID,
                "secret": credentials.secretAccessKey, "token": credentials.sessionToken as Any,
                "region": item.client.location.region,
            ])
            ours.append(try #require(signed.headers.first { $0.name == "Authorization" }).value)
        }
        let presigned = aws.presignedURL(for: "prod/eu/blobs/sha256/\(hash)", expires: 300)
        let unsignedURL = String(presigned.prefix { $0 != "?" })
        specs.append([
            "method": "GET", "url": unsignedURL, "headers": [[String]](), "payload": "unsigned",
            "timestamp": Self.instant.timeIntervalSince1970, "access": aws.location.credentials.accessKeyID,
            "secret": aws.location.credentials.secretAccessKey, "token": aws.location.credentials.sessionToken as Any,
            "region": "eu-central-1", "presign_expires": 300,
        ])

        let theirs = try await Self.botocore(specs)
        for (index, authorization) in ours.enumerated() {
            #expect(
                authorization == theirs[index]["authorization"] as? String,
                "\(cases[index].method) \(cases[index].key ?? "/"): botocore's canonical request was\n\(theirs[index]["canonical_request"] ?? "")"
            )
        }
        #expect(Self.sortedQuery(presigned) == Self.sortedQuery(theirs.last?["url"] as? String ?? ""))
    }

    @Test func aChangedByteChangesTheSignature() throws {
        let local = try client(endpoint: "http://127.0.0.1:9000")
        let first = local.signedRequest("GET", key: "a/b", payloadHash: SigV4.emptyPayload).headers.first { $0.name == "Authorization" }
        let second = local.signedRequest("GET", key: "a/c", payloadHash: SigV4.emptyPayload).headers.first { $0.name == "Authorization" }
        #expect(first?.value != second?.value)
    }

    /// The parameters of a URL's query, sorted (botocore orders them differently).
    static func sortedQuery(_ url: String) -> [String] {
        url.split(separator: "?", maxSplits: 1).last.map { $0.split(separator: "&").map(String.init).sorted() } ?? []
    }

    static func botocore(_ specs: [[String: Any]]) async throws -> [[String: Any]] {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("scripts/s3/botocore_sign.py")
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("sigv4-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: specs).write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        let result = try await Program.run("sh", ["-c", "python3 \"$0\" < \"$1\"", script.path, input.path])
        guard result.status == 0 else { throw TestPostgres.Unavailable(description: "botocore_sign.py failed: \(result.error)") }
        return try #require(try JSONSerialization.jsonObject(with: result.output) as? [[String: Any]])
    }
}
