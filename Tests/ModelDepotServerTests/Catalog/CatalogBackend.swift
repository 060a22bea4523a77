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
            // A deadline for the contract's concurrency, not its pace: ten transactions that wait for
            // one model's lock take longer than the server's ten seconds on two loaded cores.
            let catalog = try await PostgresModelCatalog.connect(
                try PostgresLocation(url: try TestPostgres.freshDatabase()), deadline: .seconds(120))
            defer { catalog.close() }
            try await body(catalog)
        }
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
