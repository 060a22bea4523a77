import Foundation
import Testing

/// CONTRIBUTING.md's "Where things live" names the server's folders as they are.
@Suite struct LayoutTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func contributingNamesEveryServerFolderAndNoOther() throws {
        let guide = try String(contentsOf: Self.root.appendingPathComponent("CONTRIBUTING.md"), encoding: .utf8)
        let server = try #require(guide.split(separator: "\n").first { $0.hasPrefix("| `Server/ModelDepotServer` |") })
        let named = Set(server.matches(of: /`([A-Z][A-Za-z0-9]+)\/`/).map { String($0.output.1) })
        let folder = Self.root.appendingPathComponent("Server/ModelDepotServer")
        let nested = ["Catalog": ["SQLite", "Postgres"], "Storage": ["Files", "S3"], "Console": ["Templates", "Assets"]]
        let folders = Set(try Self.subfolders(of: folder))
        #expect(folders.count >= 10)
        #expect(folders.subtracting(named).isEmpty, "folders CONTRIBUTING.md leaves out")
        #expect(
            named.subtracting(folders).subtracting(nested.values.flatMap { $0 }).isEmpty, "folders CONTRIBUTING.md names that do not exist")
        for (parent, children) in nested {
            #expect(Set(children) == Set(try Self.subfolders(of: folder.appendingPathComponent(parent))), "\(parent)'s subfolders")
            for child in children { #expect(named.contains(child), "CONTRIBUTING.md names \(parent)/\(child)/") }
        }
    }

    static func subfolders(of folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: folder.appendingPathComponent($0).path, isDirectory: &isDirectory)
                && isDirectory.boolValue
        }
    }
}
