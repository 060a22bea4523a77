import Foundation
import ModelDepotShared
import NIOCore
import TestSupport
import Testing

@testable import ModelDepotServer

/// The S3 client against a real S3 server (moto, request authentication on).
@Suite struct S3ClientTests {
    func client(secret: String? = nil, clock: @escaping @Sendable () -> Date = { Date() }) throws -> (S3Client, String) {
        let settings = try TestS3.settings()
        var environment = settings.environment
        if let secret { environment["AWS_SECRET_ACCESS_KEY"] = secret }
        let location = try S3Location(url: settings.freshURL(), environment: environment)
        return (S3Client(location: location, clock: clock), location.prefix)
    }

    static func pattern(_ count: Int, seed: UInt8 = 1) -> ByteBuffer {
        ByteBuffer(bytes: (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    }

    @Test func objectsAreStoredReadInRangesCopiedListedAndDeleted() async throws {
        let (s3, prefix) = try client()
        let body = Self.pattern(100_000)
        try await s3.put(prefix + "/a b/ü.bin", body)
        #expect(try await s3.size(of: prefix + "/a b/ü.bin") == 100_000)
        #expect(try await s3.size(of: prefix + "/missing") == nil)
        #expect(try await s3.get(prefix + "/missing") == nil)
        let middle = try await s3.bytes(of: prefix + "/a b/ü.bin", range: 1_000...1_999)
        #expect(middle == body.getSlice(at: 1_000, length: 1_000))

        try await s3.copy(prefix + "/a b/ü.bin", to: prefix + "/copy")
        let whole = try #require(try await s3.get(prefix + "/copy"))
        #expect(try await whole.body.collect(upTo: 1 << 20) == body)

        for index in 0..<5 { try await s3.put(prefix + "/many/\(index)", Self.pattern(index + 1)) }
        let listed = try await s3.list(prefix: prefix + "/many/", pageSize: 2)
        #expect(listed.map(\.key) == (0..<5).map { prefix + "/many/\($0)" }, "three pages of at most two keys")
        #expect(listed.map(\.size) == [1, 2, 3, 4, 5])

        try await s3.delete(prefix + "/copy")
        try await s3.delete(prefix + "/copy")
        #expect(try await s3.size(of: prefix + "/copy") == nil, "deleting twice is not an error")
    }

    @Test func multipartUploadsCompleteAbortAndAreListedWhileUnfinished() async throws {
        let (s3, prefix) = try client()
        let first = Self.pattern(5 << 20, seed: 3), second = Self.pattern(1_234, seed: 9)
        let id = try await s3.startMultipartUpload(prefix + "/whole")
        let tags = [
            try await s3.uploadPart(prefix + "/whole", uploadID: id, number: 1, first),
            try await s3.uploadPart(prefix + "/whole", uploadID: id, number: 2, second),
        ]
        #expect(try await s3.pendingUploads(prefix: prefix + "/").map(\.uploadID) == [id])
        try await s3.completeMultipartUpload(prefix + "/whole", uploadID: id, parts: tags)
        #expect(try await s3.size(of: prefix + "/whole") == (5 << 20) + 1_234)
        #expect(
            try await s3.bytes(of: prefix + "/whole", range: (5 << 20) - 2...(5 << 20) + 1)
                == ByteBuffer(bytes: Array(first.readableBytesView.suffix(2)) + Array(second.readableBytesView.prefix(2))))

        let abandoned = try await s3.startMultipartUpload(prefix + "/abandoned")
        _ = try await s3.uploadPart(prefix + "/abandoned", uploadID: abandoned, number: 1, second)
        let pending = try await s3.pendingUploads(prefix: prefix + "/")
        #expect(pending.map(\.key) == [prefix + "/abandoned"])
        #expect(pending.first?.initiated != nil)
        try await s3.abortMultipartUpload(prefix + "/abandoned", uploadID: abandoned)
        #expect(try await s3.pendingUploads(prefix: prefix + "/").isEmpty)
        #expect(try await s3.size(of: prefix + "/abandoned") == nil)
    }

    @Test func aWrongSecretIsRefusedWithTheStoresReason() async throws {
        let (s3, prefix) = try client(secret: "not-the-secret")
        let error = await #expect(throws: DepotError.self) { try await s3.put(prefix + "/x", Self.pattern(10)) }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("SignatureDoesNotMatch") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("not-the-secret") == false)
        let (honest, _) = try client()
        #expect(try await honest.size(of: prefix + "/x") == nil, "nothing was stored")
    }

    @Test func anUnreachableStoreIsAClearError() async throws {
        let settings = try TestS3.settings()
        var environment = settings.environment
        environment["AWS_ENDPOINT_URL_S3"] = "http://127.0.0.1:1"
        let s3 = S3Client(location: try S3Location(url: "s3://depot-test", environment: environment))
        let error = await #expect(throws: DepotError.self) { try await s3.size(of: "x") }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("cannot be reached") == true)
    }

    @Test func presignedURLsServeTheObjectUntilTheyExpire() async throws {
        let (s3, prefix) = try client()
        try await s3.put(prefix + "/model", Self.pattern(4_096))
        let url = s3.presignedURL(for: prefix + "/model", expires: 60)
        let fetched = try await Program.run("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code} %{size_download}", url])
        #expect(fetched.text == "200 4096")

        let (old, _) = try client(clock: { Date().addingTimeInterval(-3_600) })
        let expired = try await Program.run(
            "curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", old.presignedURL(for: prefix + "/model", expires: 60)])
        #expect(expired.text == "403")
        let tampered = url.replacingOccurrences(of: "/model?", with: "/other?")
        #expect(try await Program.run("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", tampered]).text == "403")
    }

    @Test(arguments: [
        ("https://bucket/x", "is not an s3:// URL"),
        ("s3://B/x", "is not an S3 bucket name"),
        ("s3://ab", "is not an S3 bucket name"),
        ("s3://-bucket", "is not an S3 bucket name"),
    ])
    func badBlobStoreURLsAreNamed(_ url: String, _ complaint: String) {
        let error = #expect(throws: DepotError.self) {
            try S3Location(url: url, environment: ["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"])
        }
        #expect(error?.code == .badRequest)
        #expect(error?.message.contains(complaint) == true, "\(error?.message ?? "")")
    }

    @Test func theEnvironmentIsReadAsAWSToolsReadIt() throws {
        let keys = ["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"]
        let aws = try S3Location(url: "s3://models/prod/", environment: keys.merging(["AWS_REGION": "eu-west-3"]) { $1 })
        #expect(aws.authority == "models.s3.eu-west-3.amazonaws.com" && aws.scheme == "https" && !aws.pathStyle)
        #expect(aws.prefix == "prod" && aws.region == "eu-west-3")
        let generic = try S3Location(url: "s3://models", environment: keys.merging(["AWS_ENDPOINT_URL": "http://minio:9000"]) { $1 })
        #expect(generic.authority == "minio:9000" && generic.pathStyle && generic.region == "us-east-1" && generic.prefix == "")
        let specific = try S3Location(
            url: "s3://models",
            environment: keys.merging([
                "AWS_ENDPOINT_URL": "http://minio:9000",
                "AWS_ENDPOINT_URL_S3": "https://s3.local",
            ]) { $1 })
        #expect(specific.authority == "s3.local" && specific.scheme == "https")
        let flags = try S3Location(url: "s3://models", environment: keys, endpoint: "http://127.0.0.1:4566", region: "ap-south-1")
        #expect(flags.authority == "127.0.0.1:4566" && flags.region == "ap-south-1")
        let missing = #expect(throws: DepotError.self) { try S3Location(url: "s3://models", environment: [:]) }
        #expect(missing?.code == .badRequest)
        #expect(missing?.message.contains("AWS_ACCESS_KEY_ID") == true)
    }
}
