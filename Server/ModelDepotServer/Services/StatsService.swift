import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// A model's usage per version, per arm and per window, with a sample-ratio check of every rule of
/// the current rollout: for the API and the console alike.
struct StatsService {
    let catalog: any ModelCatalog
    let usage: UsageCounter
    let clock: @Sendable () -> Date

    /// Usage of a model over the last `hours` in windows of `window` seconds.
    func stats(of name: ModelName, hours: Int, window: Int) async throws -> ModelStats {
        try await usage.flush(to: catalog)
        let sinceMinute = Int(clock().timeIntervalSince1970 / 60) - hours * 60
        let rows = try await catalog.usage(of: name, sinceMinute: sinceMinute)
        let installations = try await catalog.installations(of: name, sinceMinute: sinceMinute)
        let rollout = try await catalog.rollout(of: name)
        // Installations are the unit devices are bucketed by: counting their repeated checks
        // instead would weigh each bucket's devices by how often they happened to check.
        let checks = rollout.rules.map { rule in
            let observed = installations.filter { $0.arm == .rule(id: rule.id) }
                .reduce(into: [Int: Int]()) { $0[$1.version, default: 0] += $1.count }
            return SampleRatioCheck(rule: rule.id, name: rule.name, shares: rule.split.shares, observed: observed)
        }
        var arms = Self.counts(rows, byArm: true)
        for seen in installations {
            if let index = arms.firstIndex(where: { $0.arm == seen.arm && $0.version == seen.version }) {
                arms[index].installations = seen.count
            } else {
                arms.append(ModelStats.Count(arm: seen.arm, version: seen.version, manifests: 0, downloads: 0, installations: seen.count))
            }
        }
        let windows = Dictionary(grouping: rows) { $0.minute * 60 / window * window }
            .sorted { $0.key < $1.key }
            .map { ModelStats.Window(start: Date(timeIntervalSince1970: TimeInterval($0.key)), counts: Self.counts($0.value, byArm: true)) }
        return ModelStats(
            model: name, since: Date(timeIntervalSince1970: TimeInterval(sinceMinute * 60)), windowSeconds: window,
            versions: Self.counts(rows, byArm: false), arms: arms.sorted(by: Self.byArmThenVersion),
            windows: windows, sampleRatio: checks)
    }

    /// One sum of ``counts(_:byArm:)``: an arm (`nil` for all) and a version.
    private struct SumKey: Hashable {
        let arm: CountedArm?
        let version: Int
    }

    /// Sums rows per version (and arm), sorted by arm then version.
    static func counts(_ rows: [UsageRow], byArm: Bool) -> [ModelStats.Count] {
        var sums: [SumKey: ModelStats.Count] = [:]
        for row in rows {
            let arm = byArm ? row.arm : nil
            let key = SumKey(arm: arm, version: row.version)
            var count = sums[key] ?? ModelStats.Count(arm: arm, version: row.version, manifests: 0, downloads: 0)
            switch row.kind {
            case .manifest: count.manifests += row.count
            case .download: count.downloads += row.count
            }
            sums[key] = count
        }
        return sums.values.sorted(by: byArmThenVersion)
    }

    /// The order of counts in the JSON: by arm's text (none first), then version.
    private static func byArmThenVersion(_ lhs: ModelStats.Count, _ rhs: ModelStats.Count) -> Bool {
        (lhs.arm?.stored ?? "", lhs.version) < (rhs.arm?.stored ?? "", rhs.version)
    }
}
