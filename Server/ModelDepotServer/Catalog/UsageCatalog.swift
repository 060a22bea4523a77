import Foundation
import ModelDepotShared

/// What devices downloaded and asked for, counted per minute, arm and version. One role of
/// ``ModelCatalog``; every method throws ``DepotError``.
public protocol UsageCatalog: Sendable {
    /// Adds counted usage (downloads are attributed to every version with that file) and the
    /// installations seen per arm and version, with the minute each was first seen (an
    /// installation already recorded there keeps its first minute).
    func recordUsage(_ counts: [UsageCounter.Key: Int], installations: [UsageCounter.Installation: Int]) async throws
    /// The model's usage from `minute` (minutes since 1970) on.
    func usage(of model: ModelName, sinceMinute minute: Int) async throws -> [UsageRow]
    /// Installations first seen from `minute` on, counted per arm and version.
    func installations(of model: ModelName, sinceMinute minute: Int) async throws -> [InstallationCount]
}
