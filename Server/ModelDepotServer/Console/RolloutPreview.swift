import ModelDepotRollouts
import ModelDepotShared

/// What a rollout change does to devices, worked out from the rollouts before and after it the
/// way the manifest endpoint assigns versions: a changed rule keeps its salt, so each of its 10,000
/// buckets is compared; a new rule takes its share from what its devices got before (the default);
/// a removed rule gives its devices to what comes after it.
struct RolloutPreview {
    /// One part of the rollout the change touches, with the devices that move and those that stay.
    struct Part {
        let title: String
        let moves: [String]
        let notes: [String]
    }

    let parts: [Part]
    /// Whether no device gets another version.
    let movesNothing: Bool

    /// - Parameters:
    ///   - before: The rollout in force.
    ///   - after: The rollout the change would store.
    ///   - newestPublished: The model's newest published version: the default when none is set.
    init(before: Rollout, after: Rollout, newestPublished: Int?) {
        let fallbackBefore = before.defaultVersion ?? newestPublished
        let fallbackAfter = after.defaultVersion ?? newestPublished
        var parts: [Part] = []
        var anyMove = false
        if before.defaultVersion != after.defaultVersion {
            let moves =
                fallbackBefore == fallbackAfter
                ? []
                : ["100.00% of them move from \(Self.name(fallbackBefore)) to \(Self.name(fallbackAfter))"]
            anyMove = anyMove || !moves.isEmpty
            var notes = moves.isEmpty ? ["No device moves: they get \(Self.name(fallbackAfter)) either way."] : []
            if after.defaultVersion == nil { notes.append("The default now follows the newest published version.") }
            parts.append(Part(title: "Devices no pin or rule covers", moves: moves, notes: notes))
        }
        for rule in after.rules {
            let conditions = ConsolePages.conditions(rule)
            let old = before.rules.first { $0.id == rule.id }
            guard old != rule else { continue }
            if let earlier = Self.shadow(of: rule, in: after.rules) {
                parts.append(
                    Part(
                        title: "\(old == nil ? "New rule" : "Rule") '\(rule.name)' (\(conditions))", moves: [],
                        notes: [Self.unreached(by: earlier)]))
                continue
            }
            guard let old else {
                anyMove = anyMove || rule.split.shares.keys.contains { $0 != fallbackBefore }
                let moves = Self.shares(rule.split).map { version, basisPoints in
                    version == fallbackBefore
                        ? "\(Self.percent(basisPoints)) of them stay on \(Self.name(version))"
                        : "\(Self.percent(basisPoints)) of them move from \(Self.name(fallbackBefore)) to \(Self.name(version))"
                }
                parts.append(
                    Part(
                        title:
                            "New rule '\(rule.name)' (\(conditions)): the devices it covers, those that match its conditions and no earlier rule",
                        moves: moves, notes: ["Ranges: \(Self.ranges(rule.split))."]))
                continue
            }
            var counts: [Pair: Int] = [:]
            for bucket in 0..<RolloutBucket.count {
                let from = old.split.version(forBucket: bucket)
                let to = rule.split.version(forBucket: bucket)
                if from != to { counts[Pair(from: from, to: to), default: 0] += 1 }
            }
            var moves = counts.sorted { ($0.key.from ?? 0, $0.key.to ?? 0) < ($1.key.from ?? 0, $1.key.to ?? 0) }
                .map { "\(Self.percent($0.value)) of them move from \(Self.name($0.key.from)) to \(Self.name($0.key.to))" }
            let moved = counts.values.reduce(0, +)
            anyMove = anyMove || moved > 0 || old.conditions != rule.conditions
            if moved < RolloutBucket.count { moves.append("\(Self.percent(RolloutBucket.count - moved)) of them keep their version") }
            var notes = ["Ranges: \(Self.ranges(rule.split))."]
            if old.conditions != rule.conditions {
                notes.insert(
                    "Its conditions change from (\(ConsolePages.conditions(old))) to (\(conditions)): devices that match only one of them move between this rule and what comes after it.",
                    at: 0)
            }
            parts.append(Part(title: "Rule '\(rule.name)' (\(conditions)): the devices it covers", moves: moves, notes: notes))
        }
        for (index, rule) in before.rules.enumerated() where !after.rules.contains(where: { $0.id == rule.id }) {
            if let earlier = Self.shadow(of: rule, in: before.rules) {
                parts.append(
                    Part(
                        title: "Removed rule '\(rule.name)' (\(ConsolePages.conditions(rule)))", moves: [],
                        notes: [Self.unreached(by: earlier)]))
                continue
            }
            let later = before.rules.dropFirst(index + 1).contains { after.rules.contains(rule: $0) }
            let target = later ? "the rules after it, else \(Self.name(fallbackAfter))" : Self.name(fallbackAfter)
            anyMove = anyMove || later || rule.split.shares.keys.contains { $0 != fallbackAfter }
            let moves = Self.shares(rule.split).map { version, basisPoints in
                version == fallbackAfter && !later
                    ? "\(Self.percent(basisPoints)) of them stay on \(Self.name(version))"
                    : "\(Self.percent(basisPoints)) of them move from \(Self.name(version)) to \(target)"
            }
            parts.append(
                Part(
                    title: "Removed rule '\(rule.name)' (\(ConsolePages.conditions(rule))): the devices it covered", moves: moves, notes: []
                ))
        }
        let pinsBefore = Dictionary(before.pins.map { ($0.installationID, $0.version) }, uniquingKeysWith: { first, _ in first })
        let pinsAfter = Dictionary(after.pins.map { ($0.installationID, $0.version) }, uniquingKeysWith: { first, _ in first })
        let pinMoves = Set(pinsBefore.keys).union(pinsAfter.keys).sorted().compactMap { id -> String? in
            guard pinsBefore[id] != pinsAfter[id] else { return nil }
            return
                "Device \(id): \(pinsBefore[id].map { "pinned to v\($0)" } ?? "not pinned") → \(pinsAfter[id].map { "pinned to v\($0)" } ?? "not pinned")"
        }
        if !pinMoves.isEmpty { parts.append(Part(title: "Pinned devices", moves: pinMoves, notes: [])) }
        self.parts = parts
        movesNothing = !anyMove && pinMoves.isEmpty
    }

    /// An earlier rule that decides for every device `rule` would match: one whose conditions are
    /// a subset of `rule`'s (every split covers all 10,000 buckets, so a matching rule always decides).
    private static func shadow(of rule: Rollout.Rule, in rules: [Rollout.Rule]) -> Rollout.Rule? {
        guard let index = rules.firstIndex(where: { $0.id == rule.id }) else { return nil }
        return rules[..<index].first { $0.shadows(rule) }
    }

    private static func unreached(by earlier: Rollout.Rule) -> String {
        "No device reaches this rule, so none moves: rule '\(earlier.name)' comes before it and decides for every device it would match (its conditions: \(ConsolePages.conditions(earlier))). Narrow or remove that rule first."
    }

    private struct Pair: Hashable {
        let from: Int?
        let to: Int?
    }

    /// A share in basis points as a percentage with two decimals: `1000` → `10.00%`.
    static func percent(_ basisPoints: Int) -> String {
        "\(basisPoints / 100).\(String(format: "%02d", basisPoints % 100))%"
    }

    private static func name(_ version: Int?) -> String { version.map { "v\($0)" } ?? "nothing" }

    private static func shares(_ split: RolloutSplit) -> [(Int, Int)] {
        split.shares.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    static func ranges(_ split: RolloutSplit) -> String {
        split.ranges.map { "v\($0.version) buckets \($0.start)..<\($0.end)" }.joined(separator: ", ")
    }
}

private extension [Rollout.Rule] {
    func contains(rule: Rollout.Rule) -> Bool { contains { $0.id == rule.id } }
}
