import Crypto
import Foundation
import ModelDepotShared

#if canImport(Glibc)
    import Glibc
    private let systemRead = Glibc.read
#elseif canImport(Darwin)
    import Darwin
    private let systemRead = Darwin.read
#endif

/// The bytes of a ``VerifiedModel`` in memory, read from its file through one descriptor and
/// checked again as they were read: size, SHA-256 and TFLite structure. An interpreter built from
/// them runs exactly the bytes that were verified, whatever happens to the file afterwards; a
/// file changed or swapped after its download was verified is refused here instead.
///
/// The buffer is 64-byte aligned, lives as long as this object, and costs the model's size in
/// memory (an interpreter keeps a model's weights in memory while it runs anyway).
public final class VerifiedModelBytes: @unchecked Sendable {
    // @unchecked: the buffer is written once in init and only read afterwards.
    /// The model these bytes are.
    public let model: VerifiedModel
    private let buffer: UnsafeMutableRawBufferPointer

    init(_ model: VerifiedModel) throws(DepotError) {
        self.model = model
        let what = "The file of '\(model.name)' v\(model.version) (\(model.fileURL.path))"
        let descriptor = open(model.fileURL.path, O_RDONLY)
        guard descriptor >= 0 else {
            throw DepotError(.fileUnreadable, "\(what) could not be opened: \(String(cString: strerror(errno))).")
        }
        defer { close(descriptor) }
        // Once the buffer is set, a throw below runs deinit, which frees it.
        buffer = .allocate(byteCount: max(model.manifest.size, 1), alignment: 64)
        var hasher = SHA256()
        var filled = 0
        var spare: UInt8 = 0
        while true {
            let count =
                filled < model.manifest.size
                ? systemRead(descriptor, buffer.baseAddress! + filled, min(model.manifest.size - filled, 1 << 20))
                : systemRead(descriptor, &spare, 1)
            guard count >= 0 else { throw DepotError(.fileUnreadable, "\(what) could not be read: \(String(cString: strerror(errno))).") }
            if count == 0 { break }
            guard filled < model.manifest.size else {
                throw DepotError(
                    .sizeMismatch,
                    "\(what) grew after it was verified; it is longer than its \(model.manifest.size) signed bytes and was not handed to an interpreter. Download it again."
                )
            }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(start: buffer.baseAddress! + filled, count: count))
            filled += count
        }
        guard filled == model.manifest.size else {
            throw DepotError(
                .sizeMismatch,
                "\(what) has \(filled) bytes, not the \(model.manifest.size) verified; it changed on disk and was not handed to an interpreter. Download it again."
            )
        }
        let digest = hasher.finalize().hex
        guard digest == model.sha256 else {
            throw DepotError(
                .digestMismatch,
                "\(what) changed on disk after it was verified (SHA-256 \(digest), not \(model.sha256)); it was not handed to an interpreter. Download it again."
            )
        }
        _ = try TFLiteVerifier(policy: model.verificationPolicy).verify(UnsafeRawBufferPointer(start: buffer.baseAddress, count: filled))
    }

    deinit { buffer.deallocate() }

    /// The number of bytes.
    public var count: Int { model.manifest.size }

    /// Lends the verified bytes; the pointer is valid while this object lives.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: buffer.baseAddress, count: model.manifest.size))
    }
}

extension VerifiedModel {
    /// Reads the model's file into memory and checks it again (size, SHA-256, TFLite structure):
    /// the only bytes an interpreter should be built from.
    /// - Throws: `DepotError`: `size_mismatch` or `digest_mismatch` when the file changed after
    ///   it was verified, `file_unreadable`, or a TFLite verification code.
    public func loadVerifiedBytes() throws(DepotError) -> VerifiedModelBytes {
        try VerifiedModelBytes(self)
    }
}
