import AsyncHTTPClient
import Foundation
import Logging
import ModelDepotShared
import NIOCore

/// Blobs as objects in an S3-compatible store: `PREFIX/blobs/sha256/<hex>`, uploads staged as
/// `PREFIX/uploads/<start time>-<uuid>` (multipart, while hashing) and copied into place inside
/// the store once verified. The start time (seconds since 1970, by this server's clock) in the
/// key tells the collector an abandoned upload's age, whatever dates the store keeps. Any number of replicas can share one: objects are immutable and named by content.
public struct S3BlobStore: BlobStore {
    let client: S3Client
    /// When set, downloads are answered with a redirect to a pre-signed URL valid this long
    /// (`--blob-redirect`); otherwise the bytes are streamed through the server.
    public let redirectLifetime: Int?
    /// The server's clock, which dates uploads for the collector (``BlobCollector`` compares
    /// with the same clock); requests are signed with the real time.
    let clock: @Sendable () -> Date

    init(client: S3Client, redirectLifetime: Int?, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.client = client
        self.redirectLifetime = redirectLifetime
        self.clock = clock
    }

    /// Connects and checks that the bucket can be listed with these credentials.
    /// - Throws: ``DepotError`` `unavailable` naming the store and its reason.
    /// - Parameters:
    ///   - location: The bucket and prefix, with credentials.
    ///   - redirectLifetime: Answer downloads with a redirect valid this long (seconds).
    ///   - clock: The server's clock, which dates uploads.
    public static func connect(
        _ location: S3Location, redirectLifetime: Int? = nil,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) async throws -> S3BlobStore {
        let store = S3BlobStore(client: S3Client(location: location), redirectLifetime: redirectLifetime, clock: clock)
        _ = try await store.client.list(prefix: store.blobKey(""), pageSize: 1)
        return store
    }

    public func checkReachable() async throws {
        do {
            _ = try await client.list(prefix: blobKey(""), pageSize: 1)
        } catch {
            throw DepotError(.unavailable, "The object store does not answer.", cause: "\(error)")
        }
    }

    public var delivery: BlobDelivery {
        if let redirectLifetime {
            return .redirect { [self] sha256 in presignedURL(sha256, lifetime: redirectLifetime) }
        }
        return .stream { [self] sha256, range, size in try await stream(sha256, range: range, size: size) }
    }

    func blobKey(_ sha256: String) -> String { client.location.key("blobs/sha256/" + sha256) }

    public func beginUpload() throws(DepotError) -> any BlobUpload {
        S3Upload(store: self, key: client.location.key("uploads/\(Int(clock().timeIntervalSince1970))-" + UUID().uuidString.lowercased()))
    }

    /// Copies a finished upload's staged object into place, then removes the staging object.
    /// The copy is made even when the blob exists: it renews the object's modification time,
    /// which the collector uses to leave blobs alone that an upload has just named.
    func place(_ upload: S3Upload, sha256: String) async throws(DepotError) {
        do {
            try await client.copy(upload.key, to: blobKey(sha256))
        } catch let error as DepotError {
            throw error
        } catch {
            throw DepotError(.unavailable, "The object store failed to store blob \(sha256).", cause: "\(error)")
        }
        try? await client.delete(upload.key)
    }

    public func filePath(of sha256: String) -> String? { nil }

    public func remove(_ sha256: String) async throws(DepotError) {
        do {
            try await client.delete(blobKey(sha256))
        } catch let error as DepotError {
            throw error
        } catch {
            throw DepotError(.unavailable, "The object store failed to remove blob \(sha256).", cause: "\(error)")
        }
    }

    public func storedDigests() async throws -> [String] {
        let prefix = blobKey("")
        return try await client.list(prefix: prefix).map { String($0.key.dropFirst(prefix.count)) }
            .filter(\.isSHA256Hex)
    }

    public func removeAbandonedUploads(startedBefore date: Date) async throws -> Int {
        let prefix = client.location.key("uploads/")
        var removed = 0
        for upload in try await client.pendingUploads(prefix: prefix)
        where (Self.started(upload.key, prefix) ?? upload.initiated ?? .distantFuture) < date {
            try await client.abortMultipartUpload(upload.key, uploadID: upload.uploadID)
            removed += 1
        }
        for staged in try await client.list(prefix: prefix)
        where (Self.started(staged.key, prefix) ?? staged.lastModified ?? .distantFuture) < date {
            try await client.delete(staged.key)
            removed += 1
        }
        return removed
    }

    /// When the upload staged as `key` started, from its name.
    static func started(_ key: String, _ prefix: String) -> Date? {
        guard key.hasPrefix(prefix), let seconds = Int(key.dropFirst(prefix.count).prefix { $0 != "-" }) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// The blob's bytes in `range`, streamed from the store.
    /// - Throws: ``DepotError`` `internalError` when the store has no such object or one of
    ///   another size (it was changed outside the server), `unavailable` when it cannot be reached.
    func stream(_ sha256: String, range: ClosedRange<Int>, size: Int) async throws -> BlobByteStream {
        guard let response = try await client.get(blobKey(sha256), range: range.count == size ? nil : range) else {
            throw DepotError(
                .internalError,
                "Blob \(sha256) is missing from the object store (\(client.location), key '\(blobKey(sha256))'). Restore it from a backup.")
        }
        let length = response.headers.first(name: "content-length").flatMap(Int.init)
        guard length == range.count else {
            throw DepotError(
                .internalError,
                "Blob \(sha256) in the object store has \(length.map(String.init) ?? "an unknown number of") bytes where \(range.count) were asked for: it was changed outside the server. Restore it from a backup."
            )
        }
        return BlobByteStream(response.body)
    }

    public func withLocalFile<Result: Sendable>(
        of sha256: String, size: Int, in directory: URL,
        _ body: (String) async throws -> Result
    ) async throws -> Result {
        let path = directory.appendingPathComponent("blob-\(UUID().uuidString).part").path
        defer { unlink(path) }
        guard let handle = PrivateFile.create(at: URL(fileURLWithPath: path)) else {
            throw DepotError(.internalError, "Could not create '\(path)' for a copy of blob \(sha256).")
        }
        do {
            defer { try? handle.close() }
            if size > 0 {
                for try await piece in try await stream(sha256, range: 0...(size - 1), size: size) {
                    try handle.write(contentsOf: piece.readableBytesView)
                }
            }
        }
        return try await body(path)
    }

    /// A URL that serves the blob without credentials until it expires.
    func presignedURL(_ sha256: String, lifetime: Int) -> String {
        client.presignedURL(for: blobKey(sha256), expires: lifetime)
    }
}
