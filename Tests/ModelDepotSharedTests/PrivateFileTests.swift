import Foundation
import ModelDepotShared
import Testing

/// Temporary copies of bodies, blobs and patches are readable by their owner alone, and a file or
/// link left at their path is replaced, never written through.
@Suite struct PrivateFileTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("depot-private-\(UUID().uuidString)")

    init() throws { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }

    func mode(_ url: URL) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
    }

    @Test func aNewFileIsTheOwnersAloneWhateverTheUmaskAllows() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let shared = directory.appendingPathComponent("shared")
        #expect(FileManager.default.createFile(atPath: shared.path, contents: nil))
        let file = directory.appendingPathComponent("body")
        let handle = try #require(PrivateFile.create(at: file))
        try handle.write(contentsOf: Data("model".utf8))
        try handle.close()
        #expect(try mode(shared) & 0o044 != 0, "the umask lets others read what createFile makes")
        #expect(try mode(file) == 0o600)
        #expect(try Data(contentsOf: file) == Data("model".utf8))
    }

    @Test func aFileOrLinkLeftAtThePathIsReplacedNotFollowed() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let elsewhere = directory.appendingPathComponent("elsewhere")
        try Data("keep".utf8).write(to: elsewhere)
        let link = directory.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: elsewhere)
        let left = directory.appendingPathComponent("left")
        try Data("an earlier run's partial file".utf8).write(to: left)
        for url in [link, left] {
            let handle = try #require(PrivateFile.create(at: url))
            try handle.write(contentsOf: Data("new".utf8))
            try handle.close()
            #expect(try Data(contentsOf: url) == Data("new".utf8))
            #expect(try mode(url) == 0o600)
        }
        #expect(try Data(contentsOf: elsewhere) == Data("keep".utf8), "the link's target is untouched")
        #expect(try FileManager.default.attributesOfItem(atPath: link.path)[.type] as? FileAttributeType == .typeRegular)
    }

    @Test func aFileThatCannotBeCreatedIsNil() {
        #expect(PrivateFile.create(at: directory.appendingPathComponent("missing/body")) == nil)
        try? FileManager.default.removeItem(at: directory)
    }
}
