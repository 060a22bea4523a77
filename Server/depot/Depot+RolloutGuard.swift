import ArgumentParser
import Foundation
import ModelDepotRollouts
import ModelDepotShared

extension Depot.Rollouts {
    /// `depot rollout guard [start]|status|resume|stop|review`.
    struct Guard: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "guard",
            abstract: "Roll a new version out through a rule in stages that advance, pause or roll back by themselves.",
            discussion: """
                Examples:
                  depot rollout guard flowers --rule main --to 8
                  depot rollout guard status flowers
                  depot rollout guard stop flowers --rule main
                """,
            subcommands: [Start.self, Status.self, Resume.self, Stop.self, Review.self],
            defaultSubcommand: Start.self
        )

        struct Start: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Start a guarded rollout of a version through a rule that gives every device one version (the control).",
                discussion: """
                    Examples:
                      depot rollout guard flowers --rule main --to 8
                      depot rollout guard flowers --rule main --to 8 --stages 1,5,25,50,100 --stage-duration 1h
                      depot rollout guard flowers --rule main --to 8 --min-installations 100

                    A stage advances once it has lasted --stage-duration, --min-installations devices reported version 8 in it
                    and no guardrail (load, inference and verification failures, inference latency, and the app metrics
                    declared with --guardrail) is worse beyond its tolerance. A regression rolls the rule back to the control
                    version (--on-regression pause to hold instead); a sample-ratio mismatch pauses (--on-srm rollback).
                    With --webhook, every move is posted as JSON signed with DEPOT_WEBHOOK_SECRET (HMAC-SHA256).
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "The model's name.") var model: String
            @Option(help: "The rule's name.") var rule: String
            @Option(help: "The version to roll out.") var to: Int
            @Option(help: "The new version's percentage at each stage, rising to 100.") var stages = "1,5,25,50,100"
            @Option(help: "The least time a stage lasts: 90s, 30m, 1h, 2d.") var stageDuration = "1h"
            @Option(help: "Installations that must report the new version during a stage before it advances.")
            var minInstallations = RolloutGuardSettings.defaultMinimumInstallations
            @Option(
                help:
                    "Client networks (IPv4 /24s, IPv6 /64s) those installations must come from; from 2 up each version's largest network is left out. 1 only for a test fleet behind one proxy."
            )
            var minNetworks = RolloutGuardSettings.defaultMinimumNetworks
            @Option(help: "On a regression: rollback or pause.") var onRegression = "rollback"
            @Option(help: "On a sample-ratio mismatch: pause or rollback.") var onSrm = "pause"
            @Option(help: "Where to post every move (the secret comes from DEPOT_WEBHOOK_SECRET).") var webhook: String?
            @Flag(help: "Print JSON.") var json = false

            func run() async throws {
                let secret = ProcessInfo.processInfo.environment["DEPOT_WEBHOOK_SECRET"]
                if webhook != nil, secret == nil {
                    throw ValidationError(
                        "--webhook needs DEPOT_WEBHOOK_SECRET (16 to 256 bytes) in the environment to sign its deliveries.")
                }
                let settings = try RolloutGuardSettings(
                    stages: try Guard.basisPoints(stages), stageSeconds: try Guard.seconds(stageDuration),
                    minimumInstallations: minInstallations, minimumNetworks: minNetworks,
                    onRegression: try Guard.action(onRegression, "--on-regression"),
                    onSampleRatioMismatch: try Guard.action(onSrm, "--on-srm"),
                    webhook: try webhook.map { text in
                        guard let url = URL(string: text) else { throw ValidationError("--webhook '\(text)' is not a URL.") }
                        return url
                    })
                let started = try await connection.client().put(
                    try Depot.Rollouts.path(model, "/guards/\(rule)"),
                    json: RolloutGuardStart(to: to, settings: settings, webhookSecret: webhook == nil ? nil : secret),
                    as: RolloutGuard.self)
                print(json ? try JSONOutput.string(started) : GuardText.rendered(started))
            }
        }

        struct Status: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Show every guarded rollout of a model: stage, guardrails, and each move with its reason.",
                discussion: """
                    Examples:
                      depot rollout guard status flowers
                      depot rollout guard status flowers --json
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "The model's name.") var model: String
            @Flag(help: "Print JSON.") var json = false

            func run() async throws {
                let guards = try await connection.client().get(try Depot.Rollouts.path(model, "/guards"), as: RolloutGuards.self)
                if json { return print(try JSONOutput.string(guards)) }
                print(
                    guards.guards.isEmpty
                        ? "No guarded rollouts of '\(model)'." : guards.guards.map(GuardText.rendered).joined(separator: "\n\n"))
            }
        }

        struct Resume: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Resume a paused guarded rollout; its stage starts again.",
                discussion: """
                    Examples:
                      depot rollout guard resume flowers --rule main
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "The model's name.") var model: String
            @Option(help: "The rule's name.") var rule: String

            func run() async throws {
                let resumed = try await connection.client().post(
                    try Depot.Rollouts.path(model, "/guards/\(rule)/resume"), as: RolloutGuard.self)
                print(GuardText.rendered(resumed))
            }
        }

        struct Stop: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Stop a guarded rollout; the rule keeps its current split and can be changed by hand again.",
                discussion: """
                    Examples:
                      depot rollout guard stop flowers --rule main
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "The model's name.") var model: String
            @Option(help: "The rule's name.") var rule: String

            func run() async throws {
                let stopped = try await connection.client().delete(try Depot.Rollouts.path(model, "/guards/\(rule)"), as: RolloutGuard.self)
                print(GuardText.rendered(stopped))
            }
        }

        struct Review: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Review the model's running guarded rollouts now instead of at the server's next interval.",
                discussion: """
                    Examples:
                      depot rollout guard review flowers
                      depot rollout guard review flowers --json
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "The model's name.") var model: String
            @Flag(help: "Print JSON.") var json = false

            func run() async throws {
                let guards = try await connection.client().post(try Depot.Rollouts.path(model, "/guards/review"), as: RolloutGuards.self)
                if json { return print(try JSONOutput.string(guards)) }
                print(guards.guards.map(GuardText.rendered).joined(separator: "\n\n"))
            }
        }

        /// `1,5,25,50,100` → basis points; percentages may have two decimals.
        static func basisPoints(_ text: String) throws -> [Int] {
            try text.split(separator: ",").map { part in
                guard let percent = Decimal(string: String(part)), percent > 0, percent <= 100 else {
                    throw ValidationError("Stage '\(part)' is not a percentage above 0 and at most 100.")
                }
                let basisPoints = NSDecimalNumber(decimal: percent * 100).doubleValue
                guard basisPoints == basisPoints.rounded() else {
                    throw ValidationError("Stage '\(part)': percentages have at most two decimals.")
                }
                return Int(basisPoints)
            }
        }

        /// `90s`, `30m`, `1h`, `2d` → seconds.
        static func seconds(_ text: String) throws -> Int {
            let units: [Character: Int] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
            guard let unit = text.last.flatMap({ units[$0] }), let count = Int(text.dropLast()), (1...100_000).contains(count) else {
                throw ValidationError("Duration '\(text)' is not a number followed by s, m, h or d (e.g. 1h).")
            }
            return count * unit
        }

        static func action(_ text: String, _ option: String) throws -> RolloutGuard.Action {
            guard let action = RolloutGuard.Action(rawValue: text) else {
                throw ValidationError("\(option) '\(text)' is not rollback or pause.")
            }
            return action
        }
    }
}

/// A guarded rollout for people: where it stands, its guardrails at the last look, its moves.
enum GuardText {
    static func rendered(_ rolloutGuard: RolloutGuard) -> String {
        let stages = rolloutGuard.settings.stages.enumerated().map { index, share in
            let text = RolloutGuardSettings.percent(share)
            return index == rolloutGuard.stage && rolloutGuard.state.ownsRule ? "[\(text)]" : text
        }
        var lines = [
            "rule \(rolloutGuard.ruleName): version \(rolloutGuard.target) against version \(rolloutGuard.control) — \(rolloutGuard.state.rawValue.replacingOccurrences(of: "_", with: " ")) at \(RolloutGuardSettings.percent(rolloutGuard.state == .rolledBack ? 0 : rolloutGuard.share))",
            "stages: \(stages.joined(separator: " → ")), each at least \(RolloutGuardSettings.duration(rolloutGuard.settings.stageSeconds)) and \(rolloutGuard.settings.minimumInstallations) installations over \(rolloutGuard.settings.minimumNetworks) client networks",
        ]
        if let check = rolloutGuard.lastCheck {
            lines.append(
                "last look \(check.at.formatted(.iso8601)): \(check.targetInstallations) installations on version \(rolloutGuard.target) in this stage"
            )
            for evidence in check.evidence {
                let effect = ExperimentResults.effect(evidence.estimate, lower: evidence.lower, upper: evidence.upper, evidence.difference)
                lines.append("  \(evidence.metric): \(effect)\(evidence.regression ? "  REGRESSION" : "")")
            }
        }
        for move in rolloutGuard.moves {
            let delivery =
                move.delivery.map {
                    $0.delivered != nil
                        ? " [webhook delivered]" : " [webhook: \($0.attempts) attempts\($0.lastError.map { ", \($0)" } ?? "")]"
                } ?? ""
            lines.append(
                "\(move.at.formatted(.iso8601))  \(move.kind.rawValue.replacingOccurrences(of: "_", with: " ")) (\(move.by)): \(TerminalText.escaped(move.reason))\(delivery)"
            )
        }
        return lines.joined(separator: "\n")
    }
}
