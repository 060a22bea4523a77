import AsyncHTTPClient
import Crypto
import Foundation
import ModelDepotShared
import NIOCore
import NIOHTTP1

/// The S3 operations the blob store uses, written against the protocol (REST + SigV4) on
/// AsyncHTTPClient. Every failure is a ``DepotError`` `unavailable` naming the operation, the
/// key and the store's own error code and message.
struct S3Client: Sendable {
    let location: S3Location
    let signer: SigV4
    let http: HTTPClient
    let clock: @Sendable () -> Date

    init(location: S3Location, http: HTTPClient = S3Client.sharedHTTP, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.location = location
        signer = SigV4(credentials: location.credentials, region: location.region)
        self.http = http
        self.clock = clock
    }

    /// One HTTP client for every store in the process, never shut down (like `HTTPClient.shared`):
    /// a connection that cannot be made fails at once (no retries until the deadline, so an
    /// unreachable store is a prompt 503), no redirects are followed, and up to 64 connections
    /// per store serve concurrent downloads.
    static let sharedHTTP: HTTPClient = {
        var pool = HTTPClient.Configuration.ConnectionPool(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        pool.retryConnectionEstablishment = false
        let configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5)), connectionPool: pool)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// An object's listing entry.
    struct Object: Sendable, Hashable {
        let key: String
        let size: Int
        let lastModified: Date?
    }

    /// A multipart upload that was started and neither completed nor aborted.
    struct PendingUpload: Sendable, Hashable {
        let key: String
        let uploadID: String
        let initiated: Date?
    }

    // MARK: - Objects

    /// The object's size, or `nil` when there is none.
    func size(of key: String) async throws -> Int? {
        let response = try await send("HEAD", key: key, expecting: [200, 404], doing: "look up")
        guard response.status.code == 200 else { return nil }
        return response.headers.first(name: "content-length").flatMap(Int.init)
    }

    /// The object's bytes, or a range of them, as a stream; `nil` when there is no such object.
    func get(_ key: String, range: ClosedRange<Int>? = nil) async throws -> HTTPClientResponse? {
        let headers = range.map { [("Range", "bytes=\($0.lowerBound)-\($0.upperBound)")] } ?? []
        let response = try await send(
            "GET", key: key, headers: headers, expecting: [200, 206, 404], doing: "read",
            deadline: .distantFuture)
        return response.status.code == 404 ? nil : response.response
    }

    /// A range of the object's bytes, read whole (for small ranges).
    func bytes(of key: String, range: ClosedRange<Int>) async throws -> ByteBuffer {
        guard let response = try await get(key, range: range) else {
            throw DepotError(.unavailable, "The object store has no object '\(key)' in \(location).")
        }
        return try await response.body.collect(upTo: range.count)
    }

    func put(_ key: String, _ body: ByteBuffer) async throws {
        let hash = SHA256.hash(data: Data(body.readableBytesView)).hex
        _ = try await send("PUT", key: key, body: body, payloadHash: hash, expecting: [200], doing: "store")
    }

    func delete(_ key: String) async throws {
        _ = try await send("DELETE", key: key, expecting: [204, 200, 404], doing: "delete")
    }

    /// Copies inside the store (no bytes pass through this process).
    func copy(_ source: String, to destination: String) async throws {
        let from = "/" + location.bucket + "/" + source
        let response = try await send(
            "PUT", key: destination, headers: [("x-amz-copy-source", SigV4.encodePath(from))],
            expecting: [200], doing: "copy '\(source)' to", collecting: true)
        // A copy can fail after its 200 has been sent: the error is then in the body.
        if let text = response.text, text.contains("<Error>") {
            throw failure(response, text: text, doing: "copy '\(source)' to", key: destination)
        }
    }

    /// Every object whose key starts with `prefix` (a bucket-relative key prefix), asking for
    /// `pageSize` keys at a time (the store's default, 1,000, when `nil`).
    func list(prefix: String, pageSize: Int? = nil) async throws -> [Object] {
        var objects: [Object] = []
        var continuation: String?
        repeat {
            var query = [("list-type", "2"), ("prefix", prefix)]
            if let pageSize { query.append(("max-keys", String(pageSize))) }
            if let continuation { query.append(("continuation-token", continuation)) }
            let response = try await send("GET", key: nil, query: query, expecting: [200], doing: "list", collecting: true)
            let text = Substring(response.text ?? "")
            for entry in S3XML.blocks("Contents", in: text) {
                if let key = S3XML.value("Key", in: entry), let size = S3XML.value("Size", in: entry).flatMap(Int.init) {
                    objects.append(Object(key: key, size: size, lastModified: S3XML.value("LastModified", in: entry).flatMap(Self.date)))
                }
            }
            continuation = S3XML.value("IsTruncated", in: text) == "true" ? S3XML.value("NextContinuationToken", in: text) : nil
        } while continuation != nil
        return objects
    }

    // MARK: - Multipart uploads

    func startMultipartUpload(_ key: String) async throws -> String {
        let response = try await send(
            "POST", key: key, query: [("uploads", "")], expecting: [200], doing: "start an upload to", collecting: true)
        guard let id = S3XML.value("UploadId", in: Substring(response.text ?? "")) else {
            throw DepotError(.unavailable, "The object store started an upload to '\(key)' without an upload id.")
        }
        return id
    }

    /// Sends one part; returns its ETag.
    func uploadPart(_ key: String, uploadID: String, number: Int, _ body: ByteBuffer) async throws -> String {
        let response = try await send(
            "PUT", key: key, query: [("partNumber", String(number)), ("uploadId", uploadID)], body: body,
            payloadHash: SigV4.unsignedPayload, expecting: [200], doing: "upload part \(number) of",
            deadline: .now() + .minutes(10))
        guard let tag = response.headers.first(name: "etag") else {
            throw DepotError(.unavailable, "The object store took part \(number) of '\(key)' without an ETag.")
        }
        return tag
    }

    func completeMultipartUpload(_ key: String, uploadID: String, parts: [String]) async throws {
        let entries = parts.enumerated().map {
            "<Part><PartNumber>\($0.offset + 1)</PartNumber><ETag>\(S3XML.escape($0.element))</ETag></Part>"
        }
        let body = ByteBuffer(string: "<CompleteMultipartUpload>\(entries.joined())</CompleteMultipartUpload>")
        let response = try await send(
            "POST", key: key, query: [("uploadId", uploadID)], body: body,
            payloadHash: SHA256.hash(data: Data(body.readableBytesView)).hex,
            expecting: [200], doing: "complete the upload to", collecting: true, deadline: .now() + .minutes(10))
        if let text = response.text, text.contains("<Error>") {
            throw failure(response, text: text, doing: "complete the upload to", key: key)
        }
    }

    func abortMultipartUpload(_ key: String, uploadID: String) async throws {
        _ = try await send("DELETE", key: key, query: [("uploadId", uploadID)], expecting: [204, 200, 404], doing: "abort the upload to")
    }

    /// The multipart uploads started under `prefix` and not finished.
    func pendingUploads(prefix: String) async throws -> [PendingUpload] {
        let response = try await send(
            "GET", key: nil, query: [("uploads", ""), ("prefix", prefix)], expecting: [200],
            doing: "list the unfinished uploads in", collecting: true)
        return S3XML.blocks("Upload", in: Substring(response.text ?? "")).compactMap { entry in
            guard let key = S3XML.value("Key", in: entry), let id = S3XML.value("UploadId", in: entry) else { return nil }
            return PendingUpload(key: key, uploadID: id, initiated: S3XML.value("Initiated", in: entry).flatMap(Self.date))
        }
    }

    /// An ISO 8601 time as S3 writes it (with or without fractional seconds).
    static func date(_ text: String) -> Date? {
        let precise = ISO8601DateFormatter()
        precise.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return precise.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }

    // MARK: - Pre-signed URLs

    /// A URL that GETs `key` without credentials for `seconds`.
    func presignedURL(for key: String, expires seconds: Int) -> String {
        let request = SigV4.Request(method: "GET", path: location.path(of: key), query: [], host: location.authority, headers: [])
        let query = signer.presignedQuery(request, expires: seconds, at: clock())
        return url(path: request.path, query: query)
    }

    // MARK: - Sending

    /// A response with its body read when `collecting` (as `text`).
    struct Answer {
        let status: HTTPResponseStatus
        let headers: HTTPHeaders
        let text: String?
        let response: HTTPClientResponse
    }

    /// The URL and headers (signature included) of a request, as sent.
    func signedRequest(
        _ method: String, key: String?, query: [(String, String)] = [], headers: [(String, String)] = [],
        payloadHash: String
    ) -> (url: String, headers: [(name: String, value: String)]) {
        let request = SigV4.Request(
            method: method, path: location.path(of: key), query: query.map { ($0.0, $0.1) },
            host: location.authority, headers: headers.map { ($0.0, $0.1) })
        return (url(path: request.path, query: request.query), signer.sign(request, payloadHash: payloadHash, at: clock()))
    }

    private func send(
        _ method: String, key: String?, query: [(String, String)] = [], headers: [(String, String)] = [],
        body: ByteBuffer? = nil, payloadHash: String = SigV4.emptyPayload, expecting: Set<UInt>,
        doing action: String, collecting: Bool = false,
        deadline: NIODeadline = .now() + .seconds(30)
    ) async throws -> Answer {
        let signed = signedRequest(method, key: key, query: query, headers: headers, payloadHash: payloadHash)
        var request = HTTPClientRequest(url: signed.url)
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in signed.headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "content-length", value: String(body.readableBytes))
            request.body = .bytes(body)
        }
        let response: HTTPClientResponse
        do {
            response = try await http.execute(request, deadline: deadline)
        } catch {
            throw DepotError(
                .unavailable, "The object store \(location) cannot be reached to \(action) '\(key ?? location.bucket)'.", cause: "\(error)")
        }
        let status = response.status
        if !expecting.contains(status.code) {
            let text = method == "HEAD" ? "" : String(buffer: (try? await response.body.collect(upTo: 64 << 10)) ?? ByteBuffer())
            throw failure(
                Answer(status: status, headers: response.headers, text: text, response: response), text: text, doing: action, key: key)
        }
        let text = collecting ? String(buffer: try await response.body.collect(upTo: 16 << 20)) : nil
        return Answer(status: status, headers: response.headers, text: text, response: response)
    }

    private func failure(_ answer: Answer, text: String, doing action: String, key: String?) -> DepotError {
        let code = S3XML.value("Code", in: Substring(text)) ?? "HTTP \(answer.status.code)"
        let message =
            S3XML.value("Message", in: Substring(text)).map { ": " + $0.trimmingCharacters(in: CharacterSet(charactersIn: ". ")) } ?? ""
        return DepotError(.unavailable, "The object store \(location) refused to \(action) '\(key ?? location.bucket)': \(code)\(message).")
    }

    private func url(path: String, query: [(name: String, value: String)]) -> String {
        let encodedQuery = query.map { "\(SigV4.encode($0.name))=\(SigV4.encode($0.value))" }
        return "\(location.scheme)://\(location.authority)\(SigV4.encodePath(path))"
            + (query.isEmpty ? "" : "?" + encodedQuery.joined(separator: "&"))
    }
}
