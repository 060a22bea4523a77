import ArgumentParser
import Foundation
import ModelDepotRollouts
import ModelDepotShared

extension Depot {
    /// `depot experiment show|metrics|metric add|metric remove`: results from devices' outcomes,
    /// and the app's metrics.
    struct Experiment: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show which version wins on each metric, and declare the app's metrics.",
            discussion: """
                Examples:
                  depot experiment show flowers
                  depot experiment metrics flowers
                  depot experiment metric add flowers accepted --kind proportion --guardrail
                """,
            subcommands: [Show.self, Metrics.self, Metric.self]
        )

        struct Show: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract:
                    "Show, for every arm that handed out several versions, each metric's versions against the control (oldest) version.",
                discussion: """
                    Examples:
                      depot experiment show flowers
                      depot experiment show flowers --json
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "The model's name.") var model: String
            @Flag(help: "Print JSON: statistics, fixed and sequential effects, absolute and relative, the series over time.") var json =
                false

            func run() async throws {
                let results = try await connection.client().get(
                    "/v1/admin/models/\(try ModelName(model))/experiment", as: ExperimentResults.self)
                if json { return print(try JSONOutput.string(results)) }
                print(ExperimentText.rendered(results))
            }
        }

        struct Metrics: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "List the metrics results read: model-health ones, then the app's.",
                discussion: """
                    Examples:
                      depot experiment metrics flowers
                      depot experiment metrics flowers --json
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "The model's name.") var model: String
            @Flag(help: "Print JSON.") var json = false

            func run() async throws {
                let metrics = try await connection.client().get(
                    "/v1/admin/models/\(try ModelName(model))/metrics", as: [ExperimentMetric].self)
                if json { return print(try JSONOutput.string(metrics)) }
                print(
                    TextTable(
                        ["METRIC", "KIND", "BETTER", "TOLERANCE", "GUARDRAIL", "CAP"],
                        metrics.map {
                            [
                                $0.name, $0.kind.rawValue, $0.direction == .increase ? "higher" : "lower", "\($0.tolerance)",
                                $0.guardrail ? "yes" : "no", $0.cap?.description ?? "-",
                            ]
                        }
                    ).rendered)
            }
        }

        struct Metric: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Declare or remove an app metric.",
                discussion: """
                    Examples:
                      depot experiment metric add flowers accepted --kind proportion
                      depot experiment metric remove flowers accepted
                    """,
                subcommands: [Add.self, Remove.self]
            )

            struct Add: AsyncParsableCommand {
                static let configuration = CommandConfiguration(
                    abstract:
                        "Declare an app metric (or change a declared one): how an installation's events become its value, and which way is better.",
                    discussion: """
                        Examples:
                          depot experiment metric add flowers accepted --kind proportion
                          depot experiment metric add flowers corrections --kind sum --better decrease
                          depot experiment metric add flowers accepted --kind proportion --tolerance 0.01 --guardrail
                          depot experiment metric add flowers session_seconds --kind mean --cap p99
                        """
                )
                @OptionGroup var connection: ConnectionOptions
                @Argument(help: "The model's name.") var model: String
                @Argument(help: "The metric's name (a-z, 0-9, '_', '.', '-'; starts with a letter).") var name: String
                @Option(help: "proportion (1 if any event with a value above 0), sum (the installation's total) or mean (its average).")
                var kind: String = "sum"
                @Option(help: "Which way is better: increase or decrease.") var better: String = "increase"
                @Option(help: "The harmful change a guarded rollout tolerates: points/100 for a proportion, relative for a sum or mean.")
                var tolerance: Double = 0
                @Flag(help: "Watch it in guarded rollouts.") var guardrail = false
                @Option(
                    help:
                        "Read each installation's value as at most this: a number (5000) or a percentile of all installations' values (p99, p99.9). Not for a proportion."
                )
                var cap: String?

                func run() async throws {
                    guard let kind = ExperimentMetric.Kind(rawValue: kind) else {
                        throw DepotError(
                            .invalidMetric, "--kind \(TerminalText.escaped(kind.prefix(40))) is not a kind; use proportion, sum or mean.")
                    }
                    guard let direction = ExperimentMetric.Direction(rawValue: better) else {
                        throw DepotError(
                            .invalidMetric,
                            "--better \(TerminalText.escaped(better.prefix(40))) is not a direction; use increase or decrease.")
                    }
                    let declaration = MetricDeclaration(
                        kind: kind, direction: direction, tolerance: tolerance, guardrail: guardrail,
                        cap: try cap.map { text throws(DepotError) in try ExperimentMetric.Cap(text) })
                    let metric = try declaration.metric(named: name)
                    let declared: ExperimentMetric = try await connection.client().put(
                        "/v1/admin/models/\(try ModelName(model))/metrics/\(metric.name)", json: declaration)
                    print("declared \(declared.name) (\(declared.kind.rawValue), \(declared.direction.rawValue) is better)")
                }
            }

            struct Remove: AsyncParsableCommand {
                static let configuration = CommandConfiguration(
                    abstract:
                        "Forget a metric's name, declared or recorded without a declaration (its data stays; an undeclared name's slot is free again).",
                    discussion: """
                        Examples:
                          depot experiment metric remove flowers accepted
                        """
                )
                @OptionGroup var connection: ConnectionOptions
                @Argument(help: "The model's name.") var model: String
                @Argument(help: "The metric's name.") var name: String

                func run() async throws {
                    try ExperimentMetric.checkName(name)
                    try await connection.client().delete("/v1/admin/models/\(try ModelName(model))/metrics/\(name)")
                    print("removed the declaration of \(name)")
                }
            }
        }
    }
}
