import ArgumentParser
import Foundation
import ModelDepotRollouts
import ModelDepotServer
import ModelDepotShared

extension Depot {
    /// `depot stats MODEL`: usage per version and arm, with a sample-ratio check per rule.
    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Show installations, manifests served and downloads completed per version and arm, and flag rules whose installations are off their split.",
            discussion: """
                Examples:
                  depot stats flowers
                  depot stats flowers --hours 168
                  depot stats flowers --hours 168 --window 86400 --json
                """
        )
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The model's name.") var model: String
        @Option(help: "How many hours back to count (1-2160).") var hours = 24
        @Option(help: "The window length in seconds, a multiple of 60 (JSON output).") var window = 3_600
        @Flag(help: "Print JSON, with per-window counts.") var json = false

        func run() async throws {
            let client = try connection.client()
            let name = try ModelName(model)
            let stats = try await client.get("/v1/admin/models/\(name)/stats?hours=\(hours)&window=\(window)", as: ModelStats.self)
            if json { return print(try JSONOutput.string(stats)) }
            let rollout = try await client.get("/v1/admin/models/\(name)/rollout", as: Rollout.self)
            print(StatsText(stats: stats, rollout: rollout).rendered)
        }
    }
}

/// `depot stats`'s text: the counts per arm (rules by name) and each rule's sample-ratio check,
/// as aligned tables.
struct StatsText {
    let stats: ModelStats
    let rollout: Rollout

    var rendered: String {
        let unreachableRules = rollout.unreachableRules
        let counts = TextTable(
            ["ARM", "VERSION", "INSTALLATIONS", "MANIFESTS", "DOWNLOADS"],
            stats.arms.map {
                [
                    $0.arm.map { arm($0, unreachable: unreachableRules) } ?? "", "\($0.version)", "\($0.installations)",
                    "\($0.manifests)", "\($0.downloads)",
                ]
            }
        ).rendered
        var rows: [[String]] = []
        for check in stats.sampleRatio {
            let verdict =
                unreachableRules[check.rule] != nil
                ? "unreachable" : check.pValue == nil ? "not enough traffic yet" : check.mismatch ? "SAMPLE RATIO MISMATCH" : "ok"
            let statistic = check.pValue.map { String(format: "chi2 %.2f, p %.4g", check.chiSquared ?? 0, $0) } ?? ""
            for (index, version) in check.expected.keys.sorted(by: { Int($0) ?? 0 < Int($1) ?? 0 }).enumerated() {
                rows.append([
                    index == 0 ? "rule \(check.name)" : "", "\(version)", RolloutSegments.percent(check.expected[version] ?? 0),
                    "\(check.observed[version] ?? 0)", index == 0 ? verdict : "", index == 0 ? statistic : "",
                ])
            }
        }
        let unreachable = rollout.rules.compactMap { rule in
            unreachableRules[rule.id].map { "rule \(rule.name): unreachable, rule '\($0)' before it takes all its devices" }
        }
        let checks =
            rows.isEmpty ? [] : [TextTable(["SAMPLE RATIO", "VERSION", "SHARE", "INSTALLATIONS", "CHECK", "STATISTIC"], rows).rendered]
        return (["since \(stats.since.formatted(.iso8601))", counts] + checks + unreachable.map(TerminalText.escaped)).joined(
            separator: "\n\n")
    }

    /// A rule's arm by its name (`rule main`); one no longer in the rollout by its stored text.
    private func arm(_ arm: CountedArm, unreachable: [String: String]) -> String {
        guard case .rule(let id) = arm else { return arm.stored }
        guard let rule = rollout.rules.first(where: { $0.id == id }) else { return "\(arm.stored) (removed)" }
        return unreachable[id] == nil ? "rule \(rule.name)" : "rule \(rule.name) (unreachable)"
    }
}
