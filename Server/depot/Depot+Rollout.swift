import ArgumentParser
import Foundation
import ModelDepotRollouts
import ModelDepotServer
import ModelDepotShared

extension Depot {
    /// `depot rollout show|set|remove-rule|pin|unpin|history|guard`.
    struct Rollouts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rollout",
            abstract: "Show and change which devices get which version of a model.",
            discussion: """
                Examples:
                  depot rollout show flowers
                  depot rollout set flowers --split 7=90,8=10
                  depot rollout pin flowers 3f2a9c1e-7b4d-4e8a-9c2f-1d6e5b8a0c73 8
                """,
            subcommands: [Show.self, Set.self, RemoveRule.self, Pin.self, Unpin.self, History.self, Guard.self]
        )

        struct Show: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Show the default, pins and rules (ranges as percentages).",
                discussion: """
                    Examples:
                      depot rollout show flowers
                      depot rollout show flowers --json
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "The model's name.") var model: String
            @Flag(help: "Print JSON (ranges in basis points).") var json = false

            func run() async throws {
                let client = try connection.client()
                let rollout = try await client.get(try Rollouts.path(model), as: Rollout.self)
                if json { return print(try JSONOutput.string(rollout)) }
                let versions = try await client.get("/v1/admin/models/\(try ModelName(model))/versions", as: ModelVersionList.self).versions
                let segments = RolloutSegments(rollout, newestPublished: versions.filter(\.published).map(\.version).max())
                print(
                    RolloutText(rollout: rollout).rendered + "\n\nwho gets what, in order:\n"
                        + TerminalText.lines(segments.lines.map { "  " + $0 }))
            }
        }

        struct Set: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Set the default version and/or a rule's split and conditions.",
                discussion: """
                    Examples:
                      depot rollout set flowers --default 7
                      depot rollout set flowers --split 7=90,8=10 --when platform=ios --rule ios-canary
                      depot rollout set flowers --split 7=50,8=50 --when 'appVersion>=3.2.0' --rule new-app

                    Changing a rule's percentages keeps the devices of versions whose share stays or grows. In a new
                    rule, name the control first: devices without an installation id get the version holding the
                    rule's first bucket ('depot rollout show' says which, for each rule). A rule that an earlier rule
                    leaves no device to is refused (--allow-shadowed keeps it, listed as unreachable). With --default
                    and --split, the split is saved first: a refused split leaves the default as it was.
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "The model's name.") var model: String
            @Option(help: "The version for devices no pin or rule covers.") var `default`: Int?
            @Option(help: "Versions and percentages, e.g. 7=90,8=10 (adding up to 100).") var split: String?
            @Option(help: "A condition, e.g. platform=ios, 'appVersion>=3.2.0', 'country in US,CA'; repeat for several.") var when:
                [String] = []
            @Option(help: "The rule's name.") var rule = "main"
            @Flag(help: "Keep the rule even when an earlier rule takes every device it would match (it is then listed as unreachable).")
            var allowShadowed = false
            @Flag(help: "Print the resulting rollout as JSON.") var json = false

            func run() async throws {
                guard `default` != nil || split != nil else {
                    throw ValidationError("Give --default VERSION, --split VERSION=PERCENT,..., or both.")
                }
                if split == nil, !when.isEmpty { throw ValidationError("--when applies to a rule's --split; add --split.") }
                let client = try connection.client()
                var rollout: Rollout?
                // The split first: the checks it meets are many, and one it fails leaves the default unchanged too.
                if let split {
                    var change = RolloutRuleChange(conditions: when, shares: try Self.shares(split))
                    change.allowShadowed = allowShadowed ? true : nil
                    rollout = try await client.put(try Rollouts.path(model, "/rules/\(rule)"), json: change, as: Rollout.self)
                }
                if let version = `default` {
                    rollout = try await client.put(
                        try Rollouts.path(model, "/default"), json: RolloutVersionChoice(version: version), as: Rollout.self)
                }
                if let rollout { print(json ? try JSONOutput.string(rollout) : RolloutText(rollout: rollout).rendered) }
            }

            /// `7=90,8=10` → basis points; percentages may have two decimals (`12.5`).
            static func shares(_ text: String) throws -> [RolloutRuleChange.Share] {
                try text.split(separator: ",").map { part in
                    let pieces = part.split(separator: "=")
                    guard pieces.count == 2, let version = Int(pieces[0]), let percent = Decimal(string: String(pieces[1])),
                        percent >= 0, percent <= 100
                    else {
                        throw ValidationError("'\(part)' is not VERSION=PERCENT (e.g. 8=10).")
                    }
                    let basisPoints = NSDecimalNumber(decimal: percent * 100).doubleValue
                    guard basisPoints == basisPoints.rounded() else {
                        throw ValidationError("'\(part)': percentages have at most two decimals.")
                    }
                    return .init(version: version, basisPoints: Int(basisPoints))
                }
            }
        }

        struct RemoveRule: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Remove a rule.",
                discussion: """
                    Examples:
                      depot rollout remove-rule flowers ios-canary
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "The model's name.") var model: String
            @Argument(help: "The rule's name.") var rule: String

            func run() async throws {
                _ = try await connection.client().delete(try Rollouts.path(model, "/rules/\(rule)"), as: Rollout.self)
                print("Removed rule '\(rule)' of '\(model)'.")
            }
        }

        struct Pin: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Pin a device (a tester) to a version; pins come before rules.",
                discussion: """
                    Examples:
                      depot rollout pin flowers 3f2a9c1e-7b4d-4e8a-9c2f-1d6e5b8a0c73 8
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "The model's name.") var model: String
            @Argument(help: "The device's installation id.") var installationID: String
            @Argument(help: "The version.") var version: Int

            func run() async throws {
                _ = try await connection.client().put(
                    try Rollouts.path(model, "/pins/\(Rollouts.escaped(installationID))"),
                    json: RolloutVersionChoice(version: version), as: Rollout.self)
                print("Pinned \(installationID.lowercased()) to '\(model)' version \(version).")
            }
        }

        struct Unpin: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Remove a device's pin.",
                discussion: """
                    Examples:
                      depot rollout unpin flowers 3f2a9c1e-7b4d-4e8a-9c2f-1d6e5b8a0c73
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "The model's name.") var model: String
            @Argument(help: "The device's installation id.") var installationID: String

            func run() async throws {
                _ = try await connection.client().delete(
                    try Rollouts.path(model, "/pins/\(Rollouts.escaped(installationID))"), as: Rollout.self)
                print("Unpinned \(installationID.lowercased()).")
            }
        }

        struct History: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Show every rollout change: which key, when, before and after.",
                discussion: """
                    Examples:
                      depot rollout history flowers
                      depot rollout history flowers --json
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "The model's name.") var model: String
            @Flag(help: "Print JSON.") var json = false

            func run() async throws {
                let history = try await connection.client().get(try Rollouts.path(model, "/history"), as: RolloutHistory.self)
                if json { return print(try JSONOutput.string(history)) }
                for change in history.changes {
                    print("\(change.at.formatted(.iso8601))  key \(change.keyID)")
                    if let reason = change.reason { print("  why:    " + TerminalText.escaped(reason)) }
                    print("  before: " + RolloutText(rollout: change.before).rendered.replacingOccurrences(of: "\n", with: "\n          "))
                    print("  after:  " + RolloutText(rollout: change.after).rendered.replacingOccurrences(of: "\n", with: "\n          "))
                }
            }
        }

        static func path(_ model: String, _ suffix: String = "") throws -> String {
            "/v1/admin/models/\(try ModelName(model))/rollout\(suffix)"
        }

        static func escaped(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
        }
    }
}

/// A rollout for people: ranges as percentages.
struct RolloutText {
    let rollout: Rollout

    var rendered: String {
        var lines = ["default: " + (rollout.defaultVersion.map { "version \($0)" } ?? "newest published version")]
        lines += rollout.pins.map { "pin: \($0.installationID) -> version \($0.version)" }
        for rule in rollout.rules {
            let conditions = rule.conditions.isEmpty ? "all devices" : rule.conditions.map(\.description).joined(separator: " and ")
            let ranges = rule.split.ranges.map { "v\($0.version) \(Self.percent($0.start))-\(Self.percent($0.end))%" }.joined(
                separator: ", ")
            let unreachable = rollout.unreachableRules[rule.id].map { "; UNREACHABLE: rule '\($0)' before it takes all its devices" } ?? ""
            lines.append("rule \(rule.name) (\(rule.id), salt \(rule.salt)): \(conditions): \(ranges)\(unreachable)")
        }
        return lines.joined(separator: "\n")
    }

    static func percent(_ basisPoints: Int) -> String {
        basisPoints % 100 == 0 ? "\(basisPoints / 100)" : String(format: "%.2f", Double(basisPoints) / 100)
    }
}
