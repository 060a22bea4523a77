import Foundation
import ModelDepotRollouts
import ModelDepotShared
import Testing

@Suite struct RolloutConditionTests {
    @Test func semanticVersionsOrderAsSemverSays() throws {
        let ordered = [
            "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
            "1.0.0-rc.1", "1.0.0", "1.2", "1.10.0", "2", "17.4.1",
        ]
        let versions = try ordered.map { text throws(DepotError) in try SemanticVersion(text) }
        for (lower, higher) in zip(versions, versions.dropFirst()) {
            #expect(lower < higher, "\(lower) < \(higher)")
            #expect(!(higher < lower))
        }
        #expect(try SemanticVersion("3.2") == SemanticVersion("3.2.0+build.7"))
        // One number, two identifiers: one of them comes first (neither did, and they were not equal).
        let (zero, one) = (try SemanticVersion("4.0.0-beta.01"), try SemanticVersion("4.0.0-beta.1"))
        #expect(zero != one && zero < one && !(one < zero))
        #expect(
            throws: DepotError(
                .badRequest, "'3.x' is not a version: use MAJOR.MINOR.PATCH with an optional -prerelease, e.g. 3.2.0 or 4.0.0-beta.1.")
        ) {
            try SemanticVersion("3.x")
        }
    }

    /// Characters that sort between "0" and "9" or are digits of other scripts, but that `Int`
    /// does not read: each is no version (before, the first trapped the server), and a device
    /// sending one matches no ordering condition.
    @Test(arguments: ["1\u{301}", "3.2\u{301}.0", "\u{661}", "\u{FF11}", "1.0\u{20DD}", "0x1", "+1"])
    func digitsThatAreNotASCIIAreNoVersion(_ text: String) throws {
        #expect(throws: DepotError.self, "\(Array(text.utf8))") { try SemanticVersion(text) }
        let condition = try RolloutCondition(parsing: "appVersion<99.0.0")
        #expect(!condition.matches(DeviceContext(appVersion: text)), "\(Array(text.utf8))")
        #expect(throws: DepotError.self) { try RolloutCondition(parsing: "appVersion>=\(text)") }
    }

    @Test(
        arguments: [
            ("platform=ios", DeviceContext(platform: "iOS"), true),
            ("platform=ios", DeviceContext(platform: "android"), false),
            ("platform!=ios", DeviceContext(platform: "android"), true),
            ("platform=ios", DeviceContext(), false),
            ("appVersion>=3.2.0", DeviceContext(appVersion: "3.10.1"), true),
            ("appVersion>=3.2.0", DeviceContext(appVersion: "3.2.0-beta.1"), false),
            ("appVersion<4.0.0", DeviceContext(appVersion: "4.0.0-rc.1"), true),
            ("osVersion>=17", DeviceContext(osVersion: "17.4"), true),
            ("country in US,CA", DeviceContext(country: "ca"), true),
            ("country in US,CA", DeviceContext(country: "DE"), false),
            ("attributes.tier prefix gold", DeviceContext(attributes: ["tier": "gold-plus"]), true),
            ("attributes.tier=gold", DeviceContext(attributes: ["tier": "silver"]), false),
            ("attributes.age>=18", DeviceContext(attributes: ["age": "21"]), true),
            ("attributes.age>=18", DeviceContext(attributes: ["age": "9"]), false),
            ("attributes.age>=18", DeviceContext(attributes: ["age": "old"]), false),
        ] as [(String, DeviceContext, Bool)])
    func conditionMatchesDevice(text: String, device: DeviceContext, expected: Bool) throws {
        #expect(try RolloutCondition(parsing: text).matches(device) == expected)
    }

    @Test(arguments: [
        ("color=red", "Condition field 'color' is unknown; use platform, appVersion, osVersion, sdkVersion, country or attributes.<key>."),
        ("platform>=ios", "'platform' cannot be compared with '>='; use =, !=, in or prefix."),
        ("appVersion>=three", "'three' is not a version: use MAJOR.MINOR.PATCH with an optional -prerelease, e.g. 3.2.0 or 4.0.0-beta.1."),
        (
            "attributes.age>=old",
            "'old' is not a number, so 'attributes.age' cannot be compared with '>='; use a number or =, !=, in, prefix."
        ),
        ("platform=", "Condition on 'platform' needs exactly one value for '='."),
        (
            "whatever",
            "Condition 'whatever' is not understood; write e.g. 'platform=ios', 'appVersion>=3.2.0', 'country in US,CA' or 'attributes.tier prefix gold'."
        ),
    ])
    func malformedConditionIsRejectedWithTheReason(text: String, message: String) {
        #expect(throws: DepotError(.badRequest, message)) { try RolloutCondition(parsing: text) }
    }

    @Test func conditionsRoundTripThroughTextAndJSON() throws {
        for text in ["platform=ios", "appVersion>=3.2.0", "country in US,CA", "attributes.tier prefix gold"] {
            let condition = try RolloutCondition(parsing: text)
            #expect(condition.description == text)
            #expect(try JSONDecoder().decode(RolloutCondition.self, from: JSONEncoder().encode(condition)) == condition)
        }
    }
}
