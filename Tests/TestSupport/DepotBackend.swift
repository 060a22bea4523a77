import Foundation

/// Where a depot under test keeps its catalog and its blobs, given to each server test as its
/// argument: the embedded SQLite file and the storage directory (what `depot serve` uses with no
/// options), or the replicas' layout, a PostgreSQL database and an S3 bucket (the throwaway
/// servers `scripts/test` starts).
public enum DepotBackend: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqliteAndFiles, postgresAndS3

    public var description: String { rawValue }

    /// A fresh database and object-store prefix, with the environment that reaches the object
    /// store; `nil` for the storage directory alone.
    public func freshLocations() async throws -> (database: String, objectStore: String, environment: [String: String])? {
        switch self {
        case .sqliteAndFiles: return nil
        case .postgresAndS3:
            let s3 = try TestS3.settings()
            return await (try TestPostgres.freshDatabase(), s3.freshURL(), s3.environment)
        }
    }
}
