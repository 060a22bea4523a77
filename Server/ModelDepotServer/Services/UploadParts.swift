import ModelDepotShared
import NIOCore

/// Splits an upload's body into its parts: the model's bytes, then each companion file's, in
/// the order and sizes ``DepotHeader/companionFiles`` announced, each into its own blob upload.
struct UploadParts {
    struct Part {
        let upload: BlobUpload
        /// `nil` for the model of an upload without companion files and without a size: it
        /// takes the whole body.
        let size: Int?
        /// `nil` for the model.
        let file: CompanionFile?
    }

    let parts: [Part]
    private var current = 0
    private var written = 0

    init(_ parts: [Part]) {
        self.parts = parts
    }

    /// Writes a piece of the body to the parts it belongs to.
    /// - Throws: ``DepotError`` (`size_mismatch`) when the body runs past the last part.
    mutating func write(_ buffer: ByteBuffer) async throws(DepotError) {
        var buffer = buffer
        while buffer.readableBytes > 0 {
            while current < parts.count, let size = parts[current].size, written == size {
                current += 1
                written = 0
            }
            guard current < parts.count else {
                throw DepotError(
                    .sizeMismatch,
                    "The upload's body is longer than the model and the companion files it announced (\(parts.compactMap(\.size).reduce(0, +)) bytes): the body or \(DepotHeader.companionFiles) is wrong. Nothing was stored; upload again."
                )
            }
            let count = min(buffer.readableBytes, parts[current].size.map { $0 - written } ?? buffer.readableBytes)
            try await parts[current].upload.write(buffer.readSlice(length: count)!)
            written += count
        }
    }

    /// Checks that every part got all its bytes.
    /// - Throws: ``DepotError`` (`size_mismatch`) naming the first part that is short.
    func checkComplete() throws(DepotError) {
        var index = current
        var got = written
        while index < parts.count {
            guard let size = parts[index].size else { return }
            guard got == size else {
                let what = parts[index].file.map { "companion file '\($0.name)'" } ?? "the model"
                throw DepotError(
                    .sizeMismatch,
                    "The upload's body ended \(size - got) bytes short in \(what), which was announced with \(size) bytes: the body was cut or a file changed in transit. Nothing was stored; upload again."
                )
            }
            index += 1
            got = 0
        }
    }
}
