import ArgumentParser
import Foundation
import ModelDepotShared

extension Depot {
    /// `depot stats MODEL`: usage per version and arm, with a sample-ratio check per rule.
    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show installations, manifests served and downloads completed per version and arm, and flag rules whose installations are off their split.",
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
            let stats = try await connection.client().get(
                "/v1/admin/models/\(try ModelName(model))/stats?hours=\(hours)&window=\(window)", as: ModelStats.self)
            if json { return print(try JSONOutput.string(stats)) }
            print("since \(stats.since.formatted(.iso8601))")
            print(TextTable(["ARM", "VERSION", "INSTALLATIONS", "MANIFESTS", "DOWNLOADS"], stats.arms.map {
                [$0.arm?.stored ?? "", "\($0.version)", "\($0.installations)", "\($0.manifests)", "\($0.downloads)"]
            }).rendered)
            for check in stats.sampleRatio {
                let verdict = check.pValue.map { String(format: "chi2 %.2f, p %.4g", check.chiSquared ?? 0, $0) } ?? "not enough traffic yet"
                print("rule \(check.name): \(check.mismatch ? "SAMPLE RATIO MISMATCH" : "ok") (\(verdict); observed \(check.observed), expected shares \(check.expected))")
            }
        }
    }
}
