import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// A guarded rollout on the rollout page: its stages, where it stands, and each move with its
/// reason.
extension ConsolePages {
    struct StageItem { let label: String, stateClass: String, state: String }

    struct MoveRow { let at: String, kind: String, by: String, reason: String }

    struct GuardSection {
        let title: String
        let status: String
        let stages: [StageItem]
        let lastLook: String?
        let moves: [MoveRow]

        init(_ rolloutGuard: RolloutGuard) {
            title = "Rule '\(rolloutGuard.ruleName)': v\(rolloutGuard.target) against v\(rolloutGuard.control)"
            let state = rolloutGuard.state.rawValue.replacingOccurrences(of: "_", with: " ")
            let share = RolloutGuardSettings.percent(rolloutGuard.state == .rolledBack ? 0 : rolloutGuard.share)
            let settings = rolloutGuard.settings
            status =
                "\(state.prefix(1).uppercased() + state.dropFirst()) at \(share). Each stage lasts at least \(RolloutGuardSettings.duration(settings.stageSeconds)) and needs \(settings.minimumInstallations) installations on v\(rolloutGuard.target) over \(settings.minimumNetworks) client networks; a regression \(settings.onRegression == .rollback ? "rolls back" : "pauses"), a sample-ratio mismatch \(settings.onSampleRatioMismatch == .rollback ? "rolls back" : "pauses")."
            stages = settings.stages.enumerated().map { index, share in
                let (stateClass, state): (String, String) =
                    index < rolloutGuard.stage || rolloutGuard.state == .completed
                    ? ("stage-done", "passed")
                    : index == rolloutGuard.stage && rolloutGuard.state.ownsRule
                        ? ("stage-current", rolloutGuard.state == .paused ? "paused here" : "current")
                        : index == rolloutGuard.stage && rolloutGuard.state == .rolledBack
                            ? ("stage-failed", "rolled back here")
                            : index == rolloutGuard.stage
                                ? ("stage-failed", "stopped here")
                                : ("stage-next", "not reached")
                return StageItem(label: RolloutGuardSettings.percent(share), stateClass: stateClass, state: state)
            }
            lastLook = rolloutGuard.lastCheck.map { check in
                let guardrails = check.evidence.map { evidence in
                    let effect = ExperimentResults.effect(
                        evidence.estimate, lower: evidence.lower, upper: evidence.upper, evidence.difference)
                    return "\(evidence.metric) \(effect)\(evidence.regression ? ", a regression" : "")"
                }
                return
                    "Last look \(check.at.formatted(.iso8601)): \(check.targetInstallations) installations on v\(rolloutGuard.target) in this stage"
                    + (guardrails.isEmpty ? "; no guardrail has data yet." : "; \(guardrails.joined(separator: "; ")).")
            }
            moves = rolloutGuard.moves.map {
                MoveRow(
                    at: $0.at.formatted(.iso8601), kind: $0.kind.rawValue.replacingOccurrences(of: "_", with: " "),
                    by: $0.by == RolloutGuardMoves.actor ? "the guard" : "key \($0.by)", reason: $0.reason)
            }
        }
    }
}
