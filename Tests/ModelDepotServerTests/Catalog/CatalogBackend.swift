import Foundation
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotServer

/// The catalog implementations the contract suite runs against.
enum CatalogBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// Opens an empty catalog, runs `body` with it, and throws it away.
    func withCatalog(_ body: (any ModelCatalog) async throws -> Void) async throws {
        switch self {
        case .sqlite:
            let storage = FileManager.default.temporaryDirectory.appendingPathComponent("depot-catalog-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: storage, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: storage) }
            try await body(try SQLiteModelCatalog(path: storage + "/depot.sqlite"))
        case .postgres:
            let catalog = try await PostgresModelCatalog.forTest(try PostgresLocation(url: try TestPostgres.freshDatabase()))
            defer { catalog.close() }
            try await body(catalog)
        }
    }
}

extension PostgresModelCatalog {
    /// A catalog whose deadline is for a test's concurrency, not its pace: transactions that wait
    /// for one model's lock, on two cores busy with the whole suite, take longer than the
    /// server's ten seconds.
    static func forTest(_ location: PostgresLocation) async throws -> PostgresModelCatalog {
        try await connect(location, deadline: .seconds(120))
    }
}

/// What the contract tests store: verified descriptions of a real fixture, and fixed instants
/// (whole seconds, which every backend keeps exactly).
enum CatalogFixtures {
    static let description = try! TFLiteVerifier().verify(Fixtures.bytes("float_classifier"))
    static let instant = Date(timeIntervalSince1970: 1_800_000_000)

    static func upload(_ digit: Character, size: Int = 1_000, notes: String = "") -> VerifiedUpload {
        VerifiedUpload(sha256: String(repeating: digit, count: 64), size: size, notes: notes, tflite: description)
    }

    static func name(_ text: String) -> ModelName { try! ModelName(text) }
}
