import ModelDepotRollouts
import ModelDepotShared

/// What each kind of device gets from a rollout, in the order the server decides (pins, each
/// rule, the default), in words: `depot rollout show`, `depot publish` and the console's
/// headlines all say it this way.
///
/// ```swift
/// RolloutSegments(rollout, newestPublished: 3).lines
/// // ["rule 'main' (all devices): with an installation id v1 90%, v2 10%; without one v1",
/// //  "the default is not used: rule 'main' matches every device"]
/// ```
public struct RolloutSegments: Sendable {
    public let rollout: Rollout
    /// The model's newest published version: what the default falls back to.
    public let newestPublished: Int?

    /// The rules no device reaches (``Rollout/unreachableRules``), worked out once.
    private let unreachable: [String: String]

    public init(_ rollout: Rollout, newestPublished: Int?) {
        self.rollout = rollout
        self.newestPublished = newestPublished
        unreachable = rollout.unreachableRules
    }

    /// The version devices that no pin or rule covers get, in words.
    public var fallback: String {
        if let version = rollout.defaultVersion { return "v\(version) (the default)" }
        return newestPublished.map { "v\($0) (newest published; no default set)" } ?? "nothing (no published version)"
    }

    /// The first reachable rule that matches every device, if any: the default is never used.
    public var ruleForEveryDevice: Rollout.Rule? {
        rollout.rules.first { $0.conditions.isEmpty && unreachable[$0.id] == nil }
    }

    /// One line per segment.
    public var lines: [String] {
        var lines = rollout.pins.isEmpty ? [] : ["\(rollout.pins.count) pinned device(s): their pinned version"]
        for rule in rollout.rules {
            let conditions = rule.conditions.isEmpty ? "all devices" : rule.conditions.map(\.description).joined(separator: " and ")
            if let earlier = unreachable[rule.id] {
                lines.append("rule '\(rule.name)' (\(conditions)): unreachable, rule '\(earlier)' before it takes all its devices")
            } else {
                lines.append("rule '\(rule.name)' (\(conditions)): \(Self.split(rule)); without one v\(rule.control)")
            }
        }
        if let every = ruleForEveryDevice {
            lines.append("the default is not used: rule '\(every.name)' matches every device")
        } else {
            lines.append((rollout.rules.isEmpty ? "every device: " : "devices no rule matches: ") + fallback)
        }
        return lines
    }

    /// The segments on one line.
    public var summary: String { lines.joined(separator: "; ") }

    /// What publishing `version` changed, given this rollout and the newest published version
    /// after publishing; `previous` is the version devices had (named in the suggested commands).
    public func afterPublishing(_ version: Int, of model: ModelName, previous: Int?) -> String {
        guard rollout.defaultVersion == nil, newestPublished == version else {
            let fallback =
                rollout.defaultVersion.map { "the default stays version \($0)" }
                ?? "the newest published version is still v\(newestPublished ?? version)"
            return
                "No device gets it until the rollout names it (\(fallback); rules name their versions). Hand it to some devices with 'depot rollout set \(model) --split \(rollout.defaultVersion ?? previous ?? version)=90,\(version)=10', or to all with 'depot rollout set \(model) --default \(version)'."
        }
        if let every = ruleForEveryDevice {
            return
                "No device gets it yet: rule '\(every.name)' matches every device and names its versions. Add it to that rule with 'depot rollout set \(model) --rule \(every.name) --split \(every.control)=90,\(version)=10'."
        }
        let scope = rollout.rules.isEmpty && rollout.pins.isEmpty ? "Every device now gets it" : "Devices no pin or rule covers now get it"
        let advice =
            previous.map {
                " To test a version on a share of devices first, pin a default ('depot rollout set \(model) --default \($0)') before publishing it."
            } ?? ""
        return "\(scope): the rollout has no default, so they get the newest published version.\(advice)"
    }

    private static func split(_ rule: Rollout.Rule) -> String {
        let shares = rule.split.shares
        return "with an installation id "
            + rule.split.ranges.map(\.version).reduce(into: [Int]()) { if !$0.contains($1) { $0.append($1) } }
            .map { "v\($0) \(percent(shares[$0, default: 0]))" }.joined(separator: ", ")
    }

    /// Basis points as a percentage: `1000` is `10%`, `1250` is `12.5%`.
    public static func percent(_ basisPoints: Int) -> String {
        basisPoints % 100 == 0 ? "\(basisPoints / 100)%" : "\(Double(basisPoints) / 100)%"
    }
}
