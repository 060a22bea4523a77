import ModelDepotRollouts
import ModelDepotShared

/// The rollout's edits, as pure functions of the rollout, and the checks of what people type:
/// the API's controller and the console apply the same ones (the console also to preview a change
/// before it is saved), through ``RolloutService``.
enum RolloutEdits {
    /// The rollout with another default version (`nil`: the newest published version).
    static func settingDefault(_ version: Int?, in rollout: Rollout) -> Rollout {
        var rollout = rollout
        rollout.defaultVersion = version
        return rollout
    }

    /// A new rule's id and salt: random, never reused.
    static func freshRuleIdentity() -> (id: String, salt: String) {
        ("r-\(randomHex(4))", "s-\(randomHex(8))")
    }

    /// The rollout with rule `name` set to `conditions` and `shares`: an existing rule keeps its
    /// id, salt and the ranges of versions whose share stays; a new one comes last with `newIdentity`.
    /// - Throws: ``DepotError`` (`bad_request`) for shares that repeat a version or do not add up to 10,000.
    static func settingRule(
        _ name: String, conditions: [RolloutCondition], shares: [(Int, Int)],
        newIdentity: (id: String, salt: String), in rollout: Rollout
    ) throws -> Rollout {
        var seen = Set<Int>()
        if let repeated = shares.first(where: { !seen.insert($0.0).inserted }) {
            throw DepotError(.badRequest, "Version \(repeated.0) appears twice in the split; name each version once.")
        }
        var rollout = rollout
        if let index = rollout.rules.firstIndex(where: { $0.name == name }) {
            rollout.rules[index].conditions = conditions
            rollout.rules[index].split = try rollout.rules[index].split.resized(to: Dictionary(uniqueKeysWithValues: shares))
        } else {
            rollout.rules.append(
                Rollout.Rule(
                    id: newIdentity.id, name: name, salt: newIdentity.salt, conditions: conditions,
                    split: try RolloutSplit(shares: shares)))
        }
        return rollout
    }

    /// The rollout without the rule named `name`.
    /// - Throws: ``DepotError`` (`not_found`) when it has no such rule.
    static func removingRule(named name: String, from rollout: Rollout) throws -> Rollout {
        var rollout = rollout
        guard let index = rollout.rules.firstIndex(where: { $0.name == name }) else {
            throw DepotError(.notFound, "The rollout has no rule named '\(name)'. See the rules with 'depot rollout show'.")
        }
        rollout.rules.remove(at: index)
        return rollout
    }

    /// The rollout with a device pinned to `version` (replacing its pin, if any).
    static func pinning(_ installationID: String, to version: Int, in rollout: Rollout) -> Rollout {
        var rollout = rollout
        rollout.pins.removeAll { $0.installationID == installationID }
        rollout.pins.append(Rollout.Pin(installationID: installationID, version: version))
        return rollout
    }

    /// The rollout without a device's pin.
    /// - Throws: ``DepotError`` (`not_found`) when the device is not pinned.
    static func unpinning(_ installationID: String, in rollout: Rollout) throws -> Rollout {
        var rollout = rollout
        guard rollout.pins.contains(where: { $0.installationID == installationID }) else {
            throw DepotError(.notFound, "No device '\(installationID)' is pinned.")
        }
        rollout.pins.removeAll { $0.installationID == installationID }
        return rollout
    }

    /// A rule name as given.
    /// - Throws: ``DepotError`` (`invalid_name`) for a name outside `[a-z0-9][a-z0-9._-]{0,63}`.
    static func ruleName(_ text: String) throws -> String {
        guard (try? ModelName(text)) != nil else {
            throw DepotError(
                .invalidName,
                "Rule name '\(text.prefix(80))' is not allowed: use 1 to 64 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit."
            )
        }
        return text
    }

    /// An installation id, lower-cased.
    /// - Throws: ``DepotError`` (`bad_request`) for an empty id or one longer than 256 bytes.
    static func installationID(_ text: String) throws -> String {
        let text = text.lowercased()
        guard (1...256).contains(text.utf8.count) else {
            throw DepotError(.badRequest, "An installation id has 1 to 256 characters.")
        }
        return text
    }

    private static func randomHex(_ bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) }.hex
    }
}
