import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// The guard's moves as pure functions of the rollout and the model's guards: the service applies
/// them inside the catalog's transaction, so a move and the rule's new split commit together.
enum RolloutGuardMoves {
    /// Who the guard's own moves are recorded as, in its timeline and in the rollout's history.
    static let actor = "guard"

    /// Starts guarding rule `ruleName`: the target takes the first stage's share, the rule's one
    /// version (the control) the rest.
    /// - Throws: ``DepotError``: `not_found` without the rule; `conflict` when the rule splits
    ///   among versions or is guarded already; `bad_request` for the target or the webhook secret.
    static func start(
        _ start: RolloutGuardStart, rule ruleName: String, by keyID: String, at now: Date,
        rollout: Rollout, guards: [StoredRolloutGuard]
    ) throws -> (Rollout, [StoredRolloutGuard]) {
        guard let index = rollout.rules.firstIndex(where: { $0.name == ruleName }) else {
            throw DepotError(
                .notFound,
                "The rollout has no rule named '\(ruleName)'. Create it first, e.g. 'depot rollout set MODEL --rule \(ruleName) --split 1=100'."
            )
        }
        let rule = rollout.rules[index]
        if let earlier = rollout.unreachableRules[rule.id] {
            throw DepotError(
                .conflict,
                "Rule '\(ruleName)' is never used: rule '\(earlier)' comes before it and matches every device it would match, so a guard on it would watch no device. Give it a condition '\(earlier)' does not cover, or guard '\(earlier)'."
            )
        }
        if let owner = guards.first(where: { $0.rolloutGuard.rule == rule.id && $0.rolloutGuard.state.ownsRule }) {
            throw DepotError(
                .conflict,
                "Rule '\(ruleName)' is already guarded (version \(owner.rolloutGuard.target), \(owner.rolloutGuard.state.rawValue)); stop that guard first."
            )
        }
        let shares = rule.split.shares.filter { $0.value > 0 }
        guard shares.count == 1, let control = shares.keys.first else {
            let split = shares.sorted { $0.key < $1.key }.map { "version \($0.key) (\(RolloutGuardSettings.percent($0.value)))" }
            throw DepotError(
                .conflict,
                "Rule '\(ruleName)' splits its devices among \(split.joined(separator: ", ")); a guarded rollout starts from a rule that gives every device one version. Set it to 100 % of the version to compare with first."
            )
        }
        guard start.to != control else {
            throw DepotError(
                .badRequest, "Rule '\(ruleName)' already gives every device version \(control); name the new version to roll out.")
        }
        switch (start.settings.webhook, start.webhookSecret) {
        case (nil, nil): break
        case (nil, _?):
            throw DepotError(.badRequest, "A webhook secret was given without a webhook URL.")
        case (_?, let secret):
            guard let secret, (16...256).contains(secret.utf8.count) else {
                throw DepotError(
                    .badRequest, "A webhook needs a secret of 16 to 256 bytes to sign its deliveries (DEPOT_WEBHOOK_SECRET for the CLI).")
            }
        }
        var rolloutGuard = RolloutGuard(
            rule: rule.id, ruleName: rule.name, control: control, target: start.to, settings: start.settings,
            state: .running, stage: 0, started: now, stageStarted: now)
        rolloutGuard.record(
            .started, at: now, by: keyID,
            reason:
                "Started rolling out version \(start.to) in rule '\(ruleName)' at \(RolloutGuardSettings.percent(rolloutGuard.share)), against version \(control)."
        )
        var rollout = rollout
        rollout.rules[index].split = try rule.split.resized(to: rolloutGuard.shares)
        let kept = guards.filter { $0.rolloutGuard.rule != rule.id }
        return (rollout, kept + [StoredRolloutGuard(rolloutGuard, webhookSecret: start.webhookSecret)])
    }

    /// Applies one review to the guard of rule `ruleID`, if it is still the one reviewed (running,
    /// at the same stage): advances, completes, rolls back, pauses, stops (when the rule was
    /// changed outside the guard) or only records the look.
    static func apply(
        _ review: RolloutGuardReview, to reviewed: RolloutGuard, rollout: Rollout,
        guards: [StoredRolloutGuard]
    ) throws -> (Rollout, [StoredRolloutGuard]) {
        guard let position = guards.firstIndex(where: { $0.rolloutGuard.rule == reviewed.rule }),
            guards[position].rolloutGuard.state == .running, guards[position].rolloutGuard.stage == reviewed.stage,
            guards[position].rolloutGuard.stageStarted == reviewed.stageStarted
        else { return (rollout, guards) }
        var guards = guards
        var rollout = rollout
        var current = guards[position].rolloutGuard
        let now = review.check.at
        current.lastCheck = review.check
        let percent = RolloutGuardSettings.percent(current.share)
        guard let index = rollout.rules.firstIndex(where: { $0.id == current.rule }),
            rollout.rules[index].split.shares.filter({ $0.value > 0 }) == current.shares
        else {
            current.state = .stopped
            current.record(
                .stopped, at: now, by: actor, check: review.check,
                reason: "Rule '\(current.ruleName)' was changed or removed outside the guard; the guard stopped and left the rule as it is."
            )
            guards[position].rolloutGuard = current
            return (rollout, guards)
        }
        switch review.decision {
        case .hold:
            break
        case .advance:
            let done =
                "Stage \(current.stage + 1) (\(percent)) lasted at least \(RolloutGuardSettings.duration(current.settings.stageSeconds)) with \(review.check.targetInstallations) installations on version \(current.target) and no guardrail regressed"
            current.stage += 1
            current.stageStarted = now
            rollout.rules[index].split = try rollout.rules[index].split.resized(to: current.shares)
            if current.share == 10_000 {
                current.state = .completed
                current.record(
                    .completed, at: now, by: actor, check: review.check,
                    reason: "\(done); version \(current.target) now has 100 % of rule '\(current.ruleName)'.")
            } else {
                current.record(
                    .advanced, at: now, by: actor, check: review.check,
                    reason: "\(done); advanced to \(RolloutGuardSettings.percent(current.share)).")
            }
        case .regression(let metrics):
            let findings = review.check.evidence.filter { metrics.contains($0.metric) }.map { describe($0, current) }
            try act(
                current.settings.onRegression, on: &current, rollout: &rollout, rule: index, at: now, check: review.check,
                reason: "Regression at \(percent): \(findings.joined(separator: "; "))")
        case .regressionOnTooFew(let metrics):
            let findings = review.check.evidence.filter { metrics.contains($0.metric) }.map { describe($0, current) }
            try act(
                .pause, on: &current, rollout: &rollout, rule: index, at: now, check: review.check,
                reason:
                    "Regression at \(percent) on fewer than the \(current.settings.minimumInstallations) installations over \(current.settings.minimumNetworks) client networks the guard needs to roll back: \(findings.joined(separator: "; "))"
            )
        case .mismatch:
            let ratio = review.check.sampleRatio
            let observed =
                ratio.map { check in
                    check.observed.sorted { $0.key < $1.key }.map { "version \($0.key) \($0.value)" }.joined(separator: ", ")
                } ?? ""
            let p = ratio?.pValue.map { String(format: "%.1e", $0) } ?? "?"
            try act(
                current.settings.onSampleRatioMismatch, on: &current, rollout: &rollout, rule: index, at: now, check: review.check,
                reason:
                    "Sample-ratio mismatch at \(percent): installations reporting in the stage (\(observed)) are off the rule's shares (p = \(p)); devices of one version are not reporting as the others do, so the comparison cannot be trusted"
            )
        }
        guards[position].rolloutGuard = current
        return (rollout, guards)
    }

    /// Resumes a paused guard: its stage starts again now.
    static func resume(
        rule ruleName: String, by keyID: String, at now: Date, rollout: Rollout,
        guards: [StoredRolloutGuard]
    ) throws -> (Rollout, [StoredRolloutGuard]) {
        var guards = guards
        let position = try owned(ruleName, in: guards)
        guard guards[position].rolloutGuard.state == .paused else {
            throw DepotError(
                .conflict,
                "The guard of rule '\(ruleName)' is \(guards[position].rolloutGuard.state.rawValue), not paused; only a paused guard resumes."
            )
        }
        guards[position].rolloutGuard.state = .running
        guards[position].rolloutGuard.stageStarted = now
        guards[position].rolloutGuard.record(
            .resumed, at: now, by: keyID,
            reason: "Resumed at \(RolloutGuardSettings.percent(guards[position].rolloutGuard.share)); the stage starts again.")
        return (rollout, guards)
    }

    /// Stops a running or paused guard, leaving the rule's split as it is.
    static func stop(
        rule ruleName: String, by keyID: String, at now: Date, rollout: Rollout,
        guards: [StoredRolloutGuard]
    ) throws -> (Rollout, [StoredRolloutGuard]) {
        var guards = guards
        let position = try owned(ruleName, in: guards)
        guard guards[position].rolloutGuard.state.ownsRule else {
            throw DepotError(
                .conflict,
                "The guard of rule '\(ruleName)' is \(guards[position].rolloutGuard.state.rawValue) already; there is nothing to stop.")
        }
        guards[position].rolloutGuard.state = .stopped
        guards[position].rolloutGuard.record(
            .stopped, at: now, by: keyID,
            reason: "Stopped by hand at \(RolloutGuardSettings.percent(guards[position].rolloutGuard.share)); the rule keeps its split.")
        return (rollout, guards)
    }

    /// Refuses a hand-made change to the split of a rule a guard owns (or its removal), and one that
    /// leaves such a rule reachable by no device (an earlier rule, `--allow-shadowed`, taking all of
    /// its devices): a guard must keep watching devices.
    static func checkUnguarded(before: Rollout, after: Rollout, guards: [StoredRolloutGuard]) throws {
        let unreachable = after.unreachableRules
        for owner in guards.map(\.rolloutGuard) where owner.state.ownsRule {
            let old = before.rules.first { $0.id == owner.rule }
            let new = after.rules.first { $0.id == owner.rule }
            let guarded =
                "Rule '\(owner.ruleName)' is under a guarded rollout of version \(owner.target) (\(owner.state.rawValue) at \(RolloutGuardSettings.percent(owner.share)))"
            guard old?.split == new?.split else {
                throw DepotError(
                    .conflict, "\(guarded); stop the guard first with 'depot rollout guard stop MODEL --rule \(owner.ruleName)'.")
            }
            if let earlier = unreachable[owner.rule] {
                throw DepotError(
                    .conflict,
                    "\(guarded); this change would leave it reachable by no device, since rule '\(earlier)' would come before it and match every device it matches. Keep a condition '\(earlier)' does not cover, or stop the guard first with 'depot rollout guard stop MODEL --rule \(owner.ruleName)'."
                )
            }
        }
    }

    private static func owned(_ ruleName: String, in guards: [StoredRolloutGuard]) throws -> Int {
        guard let position = guards.lastIndex(where: { $0.rolloutGuard.ruleName == ruleName }) else {
            throw DepotError(.notFound, "Rule '\(ruleName)' has no guarded rollout. See them with 'depot rollout guard status MODEL'.")
        }
        return position
    }

    private static func act(
        _ action: RolloutGuard.Action, on current: inout RolloutGuard, rollout: inout Rollout, rule index: Int,
        at now: Date, check: RolloutGuard.Check, reason: String
    ) throws {
        switch action {
        case .rollback:
            current.state = .rolledBack
            rollout.rules[index].split = try rollout.rules[index].split.resized(to: [current.control: 10_000])
            current.record(
                .rolledBack, at: now, by: actor, check: check, share: 0,
                reason: "\(reason). Rolled rule '\(current.ruleName)' back to version \(current.control).")
        case .pause:
            current.state = .paused
            current.record(
                .paused, at: now, by: actor, check: check,
                reason: "\(reason). Paused at \(RolloutGuardSettings.percent(current.share)) until someone resumes or stops the guard.")
        }
    }

    /// `load_failed: +5.1 points (+2.2 to +8.0) on version 2 (512 installations) against version 1 (9,488), beyond the 0 tolerated`
    static func describe(_ evidence: RolloutGuard.Evidence, _ rolloutGuard: RolloutGuard) -> String {
        let effect = ExperimentResults.effect(evidence.estimate, lower: evidence.lower, upper: evidence.upper, evidence.difference)
        let unit = ExperimentResults.unit(evidence.difference)
        return
            "\(evidence.metric) \(effect) on version \(rolloutGuard.target) (\(evidence.treatment.n) installations) against version \(rolloutGuard.control) (\(evidence.control.n)), beyond the \(ExperimentResults.hundredths(evidence.tolerance).replacingOccurrences(of: "+", with: "")) \(unit) tolerated"
    }
}

extension RolloutGuard {
    /// Adds a move to the timeline, with a delivery due now when the guard has a webhook.
    mutating func record(_ kind: Move.Kind, at now: Date, by: String, check: Check? = nil, share: Int? = nil, reason: String) {
        let delivery = settings.webhook.map { _ in Delivery(id: UUID().uuidString.lowercased(), nextAttempt: now) }
        moves.append(Move(kind: kind, at: now, share: share ?? self.share, reason: reason, by: by, check: check, delivery: delivery))
    }
}
