import Foundation
import Testing

/// The README's layout section names the server's folders as they are.
@Suite struct LayoutTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theReadmeNamesEveryServerFolderAndNoOther() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let layout = try #require(readme.components(separatedBy: "## Layout").last)
        let server = try #require(layout.components(separatedBy: "Server/ModelDepotServer").dropFirst().first?
            .components(separatedBy: "\nServer/depot").first)
        let named = Set(server.matches(of: /([A-Z][A-Za-z]+\/)+/).map { String($0.output.0).components(separatedBy: "/")[0] })
        let folder = Self.root.appendingPathComponent("Server/ModelDepotServer")
        let folders = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: folder.appendingPathComponent($0).path, isDirectory: &isDirectory) && isDirectory.boolValue
        })
        #expect(folders.count >= 10)
        #expect(folders.subtracting(named).isEmpty, "folders the README's layout leaves out")
        let nested = ["Catalog": ["SQLite", "Postgres"], "Storage": ["Files", "S3"], "Console": ["Templates", "Assets"]]
        for (parent, children) in nested {
            #expect(Set(children) == Set(try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent(parent).path)
                .filter { !$0.hasSuffix(".swift") }), "\(parent)'s subfolders")
            for child in children { #expect(server.contains("\(child)/"), "the README names \(parent)/\(child)/") }
        }
    }
}
