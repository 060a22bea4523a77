import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// What the rollout pages render.
extension ConsolePages {
    struct Option { let value: String, label: String, selected: Bool }

    struct Field { let name: String, value: String }

    /// The rule editor's fields as typed: shown again with an error, carried by the preview's form.
    struct RuleDraft {
        struct Share { let version: Int, value: String }

        let rule: String
        let conditions: String
        let shares: [Share]

        /// An empty editor: every published version at 0%.
        init(published: [Int]) {
            rule = ""
            conditions = ""
            shares = published.sorted().map { Share(version: $0, value: "0") }
        }

        /// The editor for a rule of the rollout.
        init(_ rule: Rollout.Rule) {
            self.rule = rule.name
            conditions = rule.conditions.map(\.description).joined(separator: "\n")
            shares = rule.split.shares.sorted { $0.key < $1.key }.map { Share(version: $0.key, value: Self.percentText($0.value)) }
        }

        /// The fields of a submitted editor: `rule`, `conditions` (one per line) and `share-<version>`.
        init(form: [String: String]) {
            rule = (form["rule"] ?? "").trimmingCharacters(in: .whitespaces)
            conditions = form["conditions"] ?? ""
            shares = form.compactMap { name, value in
                guard name.hasPrefix("share-"), let version = Int(name.dropFirst(6)) else { return nil }
                return Share(version: version, value: value.trimmingCharacters(in: .whitespaces))
            }.sorted { $0.version < $1.version }
        }

        private init(rule: String, conditions: String, shares: [Share]) {
            self.rule = rule
            self.conditions = conditions
            self.shares = shares
        }

        /// The draft with a share field for every published version too (at 0%).
        func including(published: [Int]) -> RuleDraft {
            let missing = published.filter { version in !shares.contains { $0.version == version } }
            return RuleDraft(
                rule: rule, conditions: conditions,
                shares: (shares + missing.map { Share(version: $0, value: "0") }).sorted { $0.version < $1.version })
        }

        /// The conditions, one per non-empty line.
        var conditionLines: [String] {
            conditions.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }

        /// The fields, for the preview's form to send again.
        var fields: [(String, String)] {
            [("rule", rule), ("conditions", conditions)] + shares.map { ("share-\($0.version)", $0.value) }
        }

        /// The shares in basis points; empty fields are 0%.
        /// - Throws: ``DepotError`` (`bad_request`) naming a share that is not a percentage from 0
        ///   to 100 with at most two decimals.
        func basisPoints() throws(DepotError) -> [(Int, Int)] {
            try shares.map { share throws(DepotError) in
                let text = share.value.isEmpty ? "0" : share.value
                guard let match = text.wholeMatch(of: /([0-9]{0,3})(?:\.([0-9]{1,2}))?/), !(match.1.isEmpty && match.2 == nil) else {
                    throw DepotError(
                        .badRequest,
                        "The share of v\(share.version), '\(text.prefix(20))', is not a percentage from 0 to 100 with at most two decimals (e.g. 12.5)."
                    )
                }
                let whole = Int(match.1) ?? 0
                let fraction = match.2.map { Int($0.padding(toLength: 2, withPad: "0", startingAt: 0))! } ?? 0
                let basisPoints = whole * 100 + fraction
                guard basisPoints <= RolloutBucket.count else {
                    throw DepotError(.badRequest, "The share of v\(share.version) is \(text)%; a share is 0% to 100%.")
                }
                return (share.version, basisPoints)
            }
        }

        static func percentText(_ basisPoints: Int) -> String {
            basisPoints % 100 == 0 ? "\(basisPoints / 100)" : "\(basisPoints / 100).\(String(format: "%02d", basisPoints % 100))"
        }
    }

    struct RuleRow { let name: String, conditions: String, split: String, ranges: String, unreachable: String? }

    struct PinRow { let installation: String, version: Int }

    struct HistoryRow { let at: String, who: String, before: String, after: String, why: String? }

    struct RolloutPage {
        let csrf: String
        let error: String?
        let name: String
        /// What each kind of device gets (``RolloutSegments``).
        let segments: [String]
        /// The model's name again, for sections whose rows have a `name` of their own.
        let model: String
        let defaultOptions: [Option]
        let rules: [RuleRow]
        let hasRules: Bool
        let draft: RuleDraft
        let pins: [PinRow]
        let hasPins: Bool
        let versionOptions: [Option]
        let hasPublished: Bool
        let guards: [GuardSection]
        let hasGuards: Bool
        let history: [HistoryRow]
        let hasHistory: Bool
        /// Set when older changes are left out.
        let olderChanges: String?

        /// How many changes the page shows, newest first.
        static let historyShown = 50

        init(
            csrf: String, error: String?, name: String, segments: [String], rollout: Rollout, published: [Int], draft: RuleDraft,
            history: [RolloutChange], guards: [RolloutGuard]
        ) {
            self.csrf = csrf
            self.error = error
            self.name = name
            model = name
            self.segments = segments
            let newest = published.max()
            defaultOptions =
                [
                    Option(
                        value: "", label: "The newest published version\(newest.map { " (now v\($0))" } ?? "")",
                        selected: rollout.defaultVersion == nil)
                ]
                + published.sorted(by: >).map { Option(value: "\($0)", label: "v\($0)", selected: rollout.defaultVersion == $0) }
            let unreachable = rollout.unreachableRules
            rules = rollout.rules.map { rule in
                RuleRow(
                    name: rule.name, conditions: ConsolePages.conditions(rule), split: ConsolePages.split(rule.split),
                    ranges: RolloutPreview.ranges(rule.split),
                    unreachable: unreachable[rule.id].map { "Unreachable: rule '\($0)' before it takes all its devices." })
            }
            hasRules = !rules.isEmpty
            self.draft = draft.including(published: published)
            pins = rollout.pins.map { PinRow(installation: $0.installationID, version: $0.version) }
            hasPins = !pins.isEmpty
            versionOptions = published.sorted(by: >).map { Option(value: "\($0)", label: "v\($0)", selected: false) }
            hasPublished = !published.isEmpty
            self.history = history.suffix(Self.historyShown).reversed().map {
                HistoryRow(
                    at: $0.at.formatted(.iso8601), who: $0.keyID, before: ConsolePages.summary($0.before),
                    after: ConsolePages.summary($0.after),
                    why: $0.reason)
            }
            hasHistory = !history.isEmpty
            self.guards = guards.reversed().map(GuardSection.init)
            hasGuards = !guards.isEmpty
            olderChanges =
                history.count > Self.historyShown
                ? "The \(Self.historyShown) newest of \(history.count) changes; 'depot rollout history \(name)' lists them all." : nil
        }
    }

    struct PreviewPart { let title: String, moves: [String], notes: [String] }

    struct RolloutPreviewPage {
        let csrf: String
        let name: String, action: String, basis: String
        let fields: [Field]
        let parts: [PreviewPart]
        let movesNothing: Bool
        let before: String, after: String

        init(
            csrf: String, name: String, action: String, basis: String, fields: [Field], preview: RolloutPreview, before: String,
            after: String
        ) {
            self.csrf = csrf
            self.name = name
            self.action = action
            self.basis = basis
            self.fields = fields
            parts = preview.parts.map { PreviewPart(title: $0.title, moves: $0.moves, notes: $0.notes) }
            movesNothing = preview.movesNothing
            self.before = before
            self.after = after
        }
    }

    /// A rollout in one line: `default v7; rule 'ios' (platform=ios): v7 90.00% · v8 10.00%; 1 pin`.
    static func summary(_ rollout: Rollout) -> String {
        var parts = [rollout.defaultVersion.map { "default v\($0)" } ?? "default: the newest published version"]
        parts += rollout.rules.map { "rule '\($0.name)' (\(conditions($0))): \(split($0.split))" }
        parts += rollout.pins.map { "\($0.installationID) pinned to v\($0.version)" }
        return parts.joined(separator: "; ")
    }

    static func conditions(_ rule: Rollout.Rule) -> String {
        rule.conditions.isEmpty ? "every device" : rule.conditions.map(\.description).joined(separator: ", ")
    }

    static func split(_ split: RolloutSplit) -> String {
        split.shares.sorted { $0.key < $1.key }.map { "v\($0.key) \(RolloutPreview.percent($0.value))" }.joined(separator: " · ")
    }
}
