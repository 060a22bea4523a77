import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// Times `Rollout.assignment(for:)` over 100,000 devices: no rules, 20 rules whose conditions
/// fail (every condition evaluated, no hash), and a first rule that matches (conditions + one
/// SHA-256 bucket).
struct RuleBenchmark {
    let devices = 100_000

    func rule(_ index: Int) throws -> Rollout.Rule {
        Rollout.Rule(
            id: "r-\(index)", name: "rule-\(index)", salt: "s-\(index)",
            conditions: [
                try RolloutCondition(parsing: "platform=ios"), try RolloutCondition(parsing: "appVersion>=3.2.0"),
                try RolloutCondition(parsing: "country in US,CA"),
            ],
            split: try RolloutSplit(shares: [(1, 5_000), (2, 5_000)]))
    }

    func run() throws {
        let rules = try (0..<20).map(rule)
        let none = Rollout(defaultVersion: 1)
        let twenty = Rollout(defaultVersion: 1, rules: rules)
        let contexts = { (platform: String) in
            (0..<devices).map { DeviceContext(installationID: "device-\($0)", platform: platform, appVersion: "3.4.1", country: "US") }
        }
        let android = contexts("android")
        let ios = contexts("ios")
        let empty = time(none, android)
        let failing = time(twenty, android)
        let matching = time(twenty, ios)
        print(String(format: "no rules: %.0f ns per device", empty))
        print(String(format: "20 rules, conditions fail: %.0f ns per device, %.0f ns per rule", failing, (failing - empty) / 20))
        print(String(format: "first rule matches (3 conditions + bucket hash): %.0f ns per device", matching))
    }

    /// Median over 5 passes of nanoseconds per device.
    func time(_ rollout: Rollout, _ devices: [DeviceContext]) -> Double {
        var passes: [Double] = []
        var sink = 0
        for _ in 0..<5 {
            let start = ContinuousClock.now
            for device in devices { sink &+= rollout.assignment(for: device)?.version ?? 0 }
            let elapsed = ContinuousClock.now - start
            passes.append((Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9) / Double(devices.count))
        }
        precondition(sink != 0)
        return passes.sorted()[2]
    }
}
