import AsyncHTTPClient
import Foundation
import Logging
import ModelDepotShared
import NIOCore

/// Blobs as objects in an S3-compatible store: `PREFIX/blobs/sha256/<hex>`, uploads staged as
/// `PREFIX/uploads/<uuid>` (multipart, while hashing) and copied into place inside the store once
/// verified. Any number of replicas can share one: objects are immutable and named by content.
public struct S3BlobStore: BlobStore {
    let client: S3Client
    /// When set, downloads are answered with a redirect to a pre-signed URL valid this long
    /// (`--blob-redirect`); otherwise the bytes are streamed through the server.
    public let redirectLifetime: Int?

    init(client: S3Client, redirectLifetime: Int?) {
        self.client = client
        self.redirectLifetime = redirectLifetime
    }

    /// Connects and checks that the bucket can be listed with these credentials.
    /// - Throws: ``DepotError`` `unavailable` naming the store and its reason.
    public static func connect(_ location: S3Location, redirectLifetime: Int? = nil) async throws -> S3BlobStore {
        let store = S3BlobStore(client: S3Client(location: location), redirectLifetime: redirectLifetime)
        _ = try await store.client.list(prefix: location.key("blobs/sha256/"), pageSize: 1)
        return store
    }

    func blobKey(_ sha256: String) -> String { client.location.key("blobs/sha256/" + sha256) }

    public func beginUpload() throws(DepotError) -> BlobUpload {
        S3Upload(client: client, key: client.location.key("uploads/" + UUID().uuidString.lowercased()))
    }

    /// Copies the staged object into place, then removes the staging object. The copy is made
    /// even when the blob exists: it renews the object's modification time, which the collector
    /// uses to leave blobs alone that an upload has just named.
    public func commit(_ upload: BlobUpload, sha256: String) async throws(DepotError) {
        guard let upload = upload as? S3Upload else { preconditionFailure("upload from another store") }
        do {
            try await client.copy(upload.key, to: blobKey(sha256))
        } catch let error as DepotError {
            throw error
        } catch {
            throw DepotError(.unavailable, "The object store failed to store blob \(sha256): \(error).")
        }
        try? await client.delete(upload.key)
    }

    public func discard(_ upload: BlobUpload) async {
        await (upload as? S3Upload)?.abandon()
    }

    public func filePath(of sha256: String) -> String? { nil }

    public func remove(_ sha256: String) async throws(DepotError) {
        do {
            try await client.delete(blobKey(sha256))
        } catch let error as DepotError {
            throw error
        } catch {
            throw DepotError(.unavailable, "The object store failed to remove blob \(sha256): \(error).")
        }
    }

    /// The blob's bytes in `range`, streamed from the store.
    /// - Throws: ``DepotError`` `internalError` when the store has no such object or one of
    ///   another size (it was changed outside the server), `unavailable` when it cannot be reached.
    func stream(_ sha256: String, range: ClosedRange<Int>, size: Int) async throws -> HTTPClientResponse.Body {
        guard let response = try await client.get(blobKey(sha256), range: range.count == size ? nil : range) else {
            throw DepotError(.internalError, "Blob \(sha256) is missing from the object store (\(client.location), key '\(blobKey(sha256))'). Restore it from a backup.")
        }
        let length = response.headers.first(name: "content-length").flatMap(Int.init)
        guard length == range.count else {
            throw DepotError(.internalError, "Blob \(sha256) in the object store has \(length.map(String.init) ?? "an unknown number of") bytes where \(range.count) were asked for: it was changed outside the server. Restore it from a backup.")
        }
        return response.body
    }

    /// A URL that serves the blob without credentials until it expires.
    func presignedURL(_ sha256: String, lifetime: Int) -> String {
        client.presignedURL(for: blobKey(sha256), expires: lifetime)
    }
}
