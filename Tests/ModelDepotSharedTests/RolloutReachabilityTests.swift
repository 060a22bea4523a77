import ModelDepotRollouts
import ModelDepotShared
import Testing

@Suite struct RolloutReachabilityTests {
    @Test(arguments: [
        ("platform=ios", "platform=ios", true),
        ("platform in ios,android", "platform=ios", true),
        ("platform=ios", "platform in ios,android", false),
        ("platform!=android", "platform=ios", true),
        ("platform!=ios", "platform in ios,android", false),
        ("appVersion>=3.0.0", "appVersion>=3.2.0", true),
        ("appVersion>=3.2.0", "appVersion>=3.0.0", false),
        ("appVersion>3.0.0", "appVersion>=3.0.0", false),
        ("appVersion>=3.0.0", "appVersion>3.0.0", true),
        ("appVersion>3.0.0", "appVersion>=3.0.1", true),
        ("appVersion>=3.0.0", "appVersion<4.0.0", false),
        ("appVersion<4.0.0", "appVersion<=3.9.9", true),
        ("appVersion<=3.9.9", "appVersion<4.0.0", false),
        ("attributes.age>=18", "attributes.age=21", true),
        ("attributes.age>=18", "attributes.age in 17,21", false),
        ("attributes.age<18", "attributes.age<=17", true),
        ("attributes.tier prefix go", "attributes.tier prefix gold", true),
        ("attributes.tier prefix gold", "attributes.tier prefix go", false),
        ("attributes.tier prefix go", "attributes.tier=gold", true),
        ("country=US", "platform=ios", false),
    ])
    func aConditionFollowsOnlyFromOneThatImpliesIt(earlier: String, later: String, follows: Bool) throws {
        let mine = try RolloutCondition(parsing: earlier)
        #expect(mine.follows(from: try RolloutCondition(parsing: later)) == follows, "\(earlier) from \(later)")
    }

    /// Whenever `follows(from:)` says yes, no device meets the later condition without meeting the
    /// earlier one: tried on every pair of conditions over one field and on every value of a grid.
    @Test func followsNeverClaimsWhatADeviceContradicts() throws {
        let values = ["1", "2", "2.5", "3", "10", "x", "xy", "y"]
        let conditions =
            try ["=", "!=", ">", ">=", "<", "<="].flatMap { op in
                try ["1", "2", "3", "10"].map { value throws(DepotError) in try RolloutCondition(parsing: "attributes.n\(op)\(value)") }
            } + [
                try RolloutCondition(parsing: "attributes.n in 1,3"), try RolloutCondition(parsing: "attributes.n prefix x"),
                try RolloutCondition(parsing: "attributes.n prefix xy"),
            ]
        var claims = 0
        for earlier in conditions {
            for later in conditions where earlier.follows(from: later) {
                claims += 1
                for value in values {
                    let device = DeviceContext(attributes: ["n": value])
                    #expect(!later.matches(device) || earlier.matches(device), "\(earlier) from \(later) on n=\(value)")
                }
            }
        }
        #expect(claims > conditions.count, "more claims than the identities alone")
    }

    @Test func aRuleAfterOneThatTakesAllItsDevicesIsUnreachable() throws {
        func rule(_ name: String, _ conditions: [String]) throws -> Rollout.Rule {
            Rollout.Rule(
                id: "r-\(name)", name: name, salt: "s-\(name)",
                conditions: try conditions.map { text throws(DepotError) in try RolloutCondition(parsing: text) },
                split: try RolloutSplit(shares: [(1, 5_000), (2, 5_000)]))
        }
        let rollout = Rollout(rules: [
            try rule("ios-new", ["platform=ios", "appVersion>=3.0.0"]),
            try rule("ios", ["platform=ios"]),
            try rule("ios-newer", ["appVersion>=3.1.0", "platform=ios", "country=US"]),
            try rule("main", []),
            try rule("abtest", []),
            try rule("android", ["platform=android"]),
        ])
        #expect(rollout.unreachableRules == ["r-ios-newer": "ios-new", "r-abtest": "main", "r-android": "main"])
        #expect(Rollout(rules: [try rule("ios", ["platform=ios"]), try rule("android", ["platform=android"])]).unreachableRules.isEmpty)
    }
}
