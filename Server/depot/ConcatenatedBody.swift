import Foundation
import ModelDepotShared

/// The body of an upload with companion files, for URLSession (HTTPS), which sends one file: a
/// temporary file holding the model, then each companion file, copied 4 MiB at a time.
struct ConcatenatedBody {
    let path: String
    let modelSize: Int

    init(model: String, companions: [CompanionUpload]) throws {
        path = NSTemporaryDirectory() + "depot-upload-\(UUID().uuidString)"
        guard let output = PrivateFile.create(at: URL(fileURLWithPath: path)) else {
            throw DepotError(.fileUnreadable, "Could not create a temporary file at '\(path)' for the upload's body.")
        }
        defer { try? output.close() }
        var modelSize = 0
        for (index, source) in ([model] + companions.map(\.path)).enumerated() {
            guard let input = FileHandle(forReadingAtPath: source) else {
                throw DepotError(.fileUnreadable, "Could not open '\(source)'.")
            }
            defer { try? input.close() }
            while let chunk = try input.read(upToCount: 4 << 20), !chunk.isEmpty {
                try output.write(contentsOf: chunk)
                if index == 0 { modelSize += chunk.count }
            }
        }
        self.modelSize = modelSize
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
