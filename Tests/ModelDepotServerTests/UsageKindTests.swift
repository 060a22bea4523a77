import ModelDepotShared
import Testing

@testable import ModelDepotServer

/// The kinds of usage rows: stored as the texts the `usage` table's check allows, and any other
/// text read back is an error that names it.
@Suite struct UsageKindTests {
    @Test func eachKindIsStoredAsTheTextTheSchemaAllows() throws {
        #expect(UsageKind.allCases.map(\.rawValue) == ["manifest", "download"])
        #expect(try UsageKind(stored: "manifest") == .manifest)
        #expect(try UsageKind(stored: "download") == .download)
        #expect(UsageCounter.Subject.manifest(model: try ModelName("flowers"), version: 1).kind == .manifest)
        #expect(UsageCounter.Subject.download(sha256: String(repeating: "a", count: 64)).kind == .download)
    }

    @Test func anotherKindReadBackIsAnInternalErrorNamingIt() {
        let error = #expect(throws: DepotError.self) { try UsageKind(stored: "Download") }
        #expect(error?.code == .internalError)
        #expect(error?.message.contains("'Download'") == true, "\(error?.message ?? "")")
    }
}
