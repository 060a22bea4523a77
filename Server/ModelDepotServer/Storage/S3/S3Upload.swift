import Crypto
import Foundation
import ModelDepotShared
import NIOCore
import NIOPosix

/// An upload streamed into the object store as a multipart upload while it is hashed: the
/// request's bytes fill one part at a time (8 MiB), and up to two parts are on their way while
/// the next fills, so at most three parts of it are ever in memory and none on local disk.
actor S3Upload: BlobUpload {
    static let partSize = 8 << 20
    static let partsInFlight = 2

    nonisolated let store: S3BlobStore
    nonisolated var client: S3Client { store.client }
    /// The staging object's key (`PREFIX/uploads/<start time>-<uuid>`).
    nonisolated let key: String
    private var uploadID: String?
    private var filling = ByteBuffer()
    private var sending: [Task<String, any Error>] = []
    private var tags: [String] = []
    private var hasher = SHA256()
    private var size = 0
    private var completed = false

    init(store: S3BlobStore, key: String) {
        self.store = store
        self.key = key
    }

    func write(_ bytes: ByteBuffer) async throws(DepotError) {
        var bytes = bytes
        bytes.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        size += bytes.readableBytes
        while bytes.readableBytes > 0 {
            let room = Self.partSize - filling.readableBytes
            var piece = bytes.readSlice(length: min(room, bytes.readableBytes))!
            filling.writeBuffer(&piece)
            if filling.readableBytes == Self.partSize { try await send() }
        }
    }

    func finish() async throws(DepotError) -> String {
        if filling.readableBytes > 0 || tags.isEmpty && sending.isEmpty { try await send() }
        try await collect(keeping: 0)
        try await run { [client, key, uploadID, tags] in try await client.completeMultipartUpload(key, uploadID: uploadID!, parts: tags) }
        completed = true
        return hasher.finalize().hex
    }

    func finishedBytes() -> UploadedBytes {
        .paged(
            PagedBytes(count: size, pageSize: 1 << 20, capacity: 16) { [client, key] offset, count in
                try Self.blocking { try await client.bytes(of: key, range: offset...(offset + count - 1)) }.readableBytesView.map { $0 }
            })
    }

    func commit(sha256: String) async throws(DepotError) {
        try await store.place(self, sha256: sha256)
    }

    func discard() async {
        await abandon()
    }

    /// Removes whatever the upload left in the store: its parts, or its staging object.
    func abandon() async {
        for task in sending { task.cancel() }
        for task in sending { _ = try? await task.value }
        sending = []
        if completed {
            try? await client.delete(key)
        } else if let uploadID {
            try? await client.abortMultipartUpload(key, uploadID: uploadID)
        }
    }

    /// Starts sending the filled part (the first part also starts the multipart upload).
    private func send() async throws(DepotError) {
        if uploadID == nil {
            uploadID = try await run { [client, key] in try await client.startMultipartUpload(key) }
        }
        try await collect(keeping: Self.partsInFlight - 1)
        let part = filling
        filling = ByteBuffer()
        let number = tags.count + sending.count + 1
        sending.append(Task { [client, key, uploadID] in try await client.uploadPart(key, uploadID: uploadID!, number: number, part) })
    }

    /// Waits for the oldest parts in flight until at most `count` are.
    private func collect(keeping count: Int) async throws(DepotError) {
        while sending.count > count {
            let task = sending.removeFirst()
            tags.append(try await run { try await task.value })
        }
    }

    private func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws(DepotError) -> T {
        do {
            return try await body()
        } catch let error as DepotError {
            throw error
        } catch {
            throw DepotError(.unavailable, "The object store failed during an upload to '\(key)'.", cause: "\(error)")
        }
    }

    /// Runs `body` on the concurrency pool and waits for it on this thread (the verification's
    /// own, never a pool's).
    private static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let result = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            do { result.value = .success(try await body()) } catch { result.value = .failure(error) }
            done.signal()
        }
        done.wait()
        return try result.value!.get()
    }
}

/// A result handed from a task to the thread waiting for it (written before the semaphore is
/// signalled, read after it is waited for).
private final class ResultBox<T: Sendable>: @unchecked Sendable {
    var value: Result<T, any Error>?
}
