import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// What the results page renders.
extension ConsolePages {
    struct ArmRow { let arm: String, version: Int, manifests: Int, downloads: Int, installations: Int }

    struct LegendItem { let label: String, seriesClass: String }

    struct CheckRow {
        let name: String, expected: String, observed: String
        let verdict: String
        let mismatch: Bool
    }

    struct ResultsPage {
        let csrf: String
        let error: String?
        let name: String
        let periods: [Option]
        let arms: [ArmRow]
        let hasTraffic: Bool
        let manifestsChart: String, downloadsChart: String
        let legend: [LegendItem]
        let checks: [CheckRow]
        let hasChecks: Bool

        /// How many lines a chart draws; quieter series are summed into one more, "other".
        static let maximumSeries = 7

        init(csrf: String, error: String?, name: String, stats: ModelStats, rollout: Rollout, hours: Int) {
            self.csrf = csrf
            self.error = error
            self.name = name
            periods = ConsoleController.periods.map { Option(value: "\($0.hours)", label: $0.label, selected: $0.hours == hours) }
            let unreachableRules = rollout.unreachableRules
            let label = { (count: ModelStats.Count) in
                "\(ConsolePages.arm(count.arm, rollout: rollout, unreachable: unreachableRules)), v\(count.version)"
            }
            arms = stats.arms.map {
                ArmRow(
                    arm: ConsolePages.arm($0.arm, rollout: rollout, unreachable: unreachableRules), version: $0.version,
                    manifests: $0.manifests,
                    downloads: $0.downloads, installations: $0.installations)
            }
            hasTraffic = !stats.arms.isEmpty

            let window = stats.windowSeconds
            let first = Int(stats.since.timeIntervalSince1970) / window * window
            // The window the stats were read in: one clock read for the whole page.
            let last = (Int(stats.since.timeIntervalSince1970) + hours * 3_600) / window * window
            let starts = Array(stride(from: first, through: last, by: window))
            let position = Dictionary(uniqueKeysWithValues: starts.enumerated().map { ($0.element, $0.offset) })
            let ranked = stats.arms.filter { $0.manifests + $0.downloads > 0 }
                .sorted {
                    ($0.manifests + $0.downloads, $1.arm?.stored ?? "", $1.version) > (
                        $1.manifests + $1.downloads, $0.arm?.stored ?? "", $0.version
                    )
                }
            let shown = ranked.prefix(Self.maximumSeries).map(label)
            var labels = shown
            if ranked.count > Self.maximumSeries { labels.append("other") }
            var manifests = Array(repeating: Array(repeating: 0, count: starts.count), count: labels.count)
            var downloads = manifests
            for windowCounts in stats.windows {
                guard let column = position[Int(windowCounts.start.timeIntervalSince1970)] else { continue }
                for count in windowCounts.counts {
                    // A line of its own, else "other" (only counts past the busiest lines lack one).
                    guard let row = shown.firstIndex(of: label(count)) ?? (labels.count > shown.count ? shown.count : nil) else { continue }
                    manifests[row][column] += count.manifests
                    downloads[row][column] += count.downloads
                }
            }
            let dates = starts.map { Date(timeIntervalSince1970: TimeInterval($0)) }
            manifestsChart =
                ConsoleChart(
                    id: "manifests", title: "Manifests served per window", starts: dates, windowSeconds: window,
                    series: zip(labels, manifests).map { ConsoleChart.Series(label: $0, values: $1) }
                ).svg
            downloadsChart =
                ConsoleChart(
                    id: "downloads", title: "Downloads completed per window", starts: dates, windowSeconds: window,
                    series: zip(labels, downloads).map { ConsoleChart.Series(label: $0, values: $1) }
                ).svg
            legend = labels.enumerated().map { LegendItem(label: $0.element, seriesClass: "series-\($0.offset % 8)") }

            checks = stats.sampleRatio.map { CheckRow($0, shadowedBy: unreachableRules[$0.rule]) }
            hasChecks = !checks.isEmpty
        }
    }

    /// An arm for people: `rule 'ios-canary'` rather than `rule:r-1a2b3c4d`.
    /// `unreachable`: the rollout's ``Rollout/unreachableRules``, worked out once by the page.
    static func arm(_ arm: CountedArm?, rollout: Rollout, unreachable: [String: String]) -> String {
        guard let arm else { return "all" }
        switch arm {
        case .latest: return "newest published (no default set)"
        case .default: return "default"
        case .pin: return "pinned devices"
        case .rule(let id):
            guard let rule = rollout.rules.first(where: { $0.id == id }) else { return "removed rule \(id)" }
            return unreachable[id] == nil ? "rule '\(rule.name)'" : "rule '\(rule.name)' (unreachable)"
        case .unknown, .unrecognized: return arm.stored
        }
    }
}

extension ConsolePages.CheckRow {
    /// `shadowedBy`: the earlier rule that takes all of this rule's devices, when no device can reach it.
    init(_ check: SampleRatioCheck, shadowedBy earlier: String?) {
        name = check.name
        let versions = check.expected.keys.compactMap(Int.init).sorted()
        expected = versions.map { "v\($0) \(RolloutPreview.percent(check.expected["\($0)"] ?? 0))" }.joined(separator: " · ")
        observed = versions.map { "v\($0) \(check.observed["\($0)"] ?? 0)" }.joined(separator: " · ")
        mismatch = check.mismatch
        if let earlier {
            verdict = "Unreachable: rule '\(earlier)' comes before it and takes all its devices, so no device is counted here."
        } else if let p = check.pValue {
            let shown = p < 0.0001 ? String(format: "%.1e", p) : String(format: "%.4f", p)
            verdict =
                check.mismatch
                ? "Sample-ratio mismatch (p = \(shown), below \(SampleRatioCheck.threshold)): devices reach this rule's versions in a ratio far from its split. Something between assignment and counting is off (a cache, clients that ignore the manifest, lost reports); don't trust this experiment's comparison until you find it."
                : "Matches the split (p = \(shown))."
        } else {
            verdict = "Not enough installations yet to check (every version needs at least 5 expected)."
        }
    }
}
