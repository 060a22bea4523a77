import Foundation
import Hummingbird
import ModelDepotShared

/// The console's stylesheet and scripts: resources of the server, read once, served by
/// `depot serve` itself with cache headers (no CDN, no build step).
enum ConsoleAssets {
    /// The files by name, with their media types.
    static let files: [String: (type: String, body: ByteBuffer)] = {
        let types = ["css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8"]
        guard let folder = Bundle.module.url(forResource: "Assets", withExtension: nil),
            let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path)
        else { return [:] }
        var files: [String: (type: String, body: ByteBuffer)] = [:]
        for name in names {
            let url = folder.appendingPathComponent(name)
            if let type = types[url.pathExtension], let data = try? Data(contentsOf: url) { files[name] = (type, ByteBuffer(bytes: data)) }
        }
        return files
    }()

    /// The answer for `/console/assets/{name}`.
    /// - Throws: ``DepotError`` (`not_found`) for a name the console does not have.
    static func response(for name: String) throws -> Response {
        guard let file = files[name] else {
            throw DepotError(.notFound, "The console has no asset '\(name.prefix(80))'.")
        }
        return Response(
            status: .ok, headers: [.contentType: file.type, .cacheControl: "public, max-age=3600"],
            body: .init(byteBuffer: file.body))
    }
}
