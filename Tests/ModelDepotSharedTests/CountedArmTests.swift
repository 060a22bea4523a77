import Foundation
import ModelDepotRollouts
import ModelDepotShared
import Testing

/// The arms usage is counted under: stored, signed and sent as the same text they always were,
/// read back as the same case, compared and sorted as their texts.
@Suite struct CountedArmTests {
    /// The case an arm is, by name: equality compares texts, so tests look at cases this way.
    static func caseName(_ arm: CountedArm) -> String {
        switch arm {
        case .pin: "pin"
        case .default: "default"
        case .rule(let id): "rule(\(id))"
        case .latest: "latest"
        case .unknown: "unknown"
        case .unrecognized(let text): "unrecognized(\(text))"
        }
    }

    /// 80 characters no server wrote as an arm: escapes, separators, a zero byte, a non-ASCII letter.
    static let junk = String(repeating: "x%&=#\u{0}ü/", count: 10)

    @Test(arguments: [
        "pin", "default", "latest", "unknown", "rule:r-1a2b3c4d", "rule:", CountedArmTests.junk, "ü", "rule:\u{301}x", "Pin", "",
    ])
    func storedTextReadsBackToTheSameBytes(text: String) {
        #expect(Array(CountedArm(stored: text).stored.utf8) == Array(text.utf8))
    }

    @Test func storedTextIsReadAsItsCase() {
        let cases = [
            ("pin", "pin"), ("default", "default"), ("latest", "latest"), ("unknown", "unknown"),
            ("rule:r-1a2b3c4d", "rule(r-1a2b3c4d)"), ("rule:", "rule()"), ("rule:\u{301}x", "rule(\u{301}x)"),
            ("Pin", "unrecognized(Pin)"), ("rule", "unrecognized(rule)"), (" pin", "unrecognized( pin)"), ("ü", "unrecognized(ü)"),
            (Self.junk, "unrecognized(\(Self.junk))"),
        ]
        for (text, expected) in cases {
            #expect(Self.caseName(CountedArm(stored: text)) == expected, "\(text)")
        }
    }

    @Test func eachArmIsStoredAsTheTextItAlwaysWas() {
        let arms: [(CountedArm, String)] = [
            (.pin, "pin"), (.default, "default"), (.rule(id: "x"), "rule:x"), (.rule(id: "r-1a2b3c4d"), "rule:r-1a2b3c4d"),
            (.latest, "latest"), (.unknown, "unknown"), (.unrecognized("bundled"), "bundled"),
        ]
        for (arm, text) in arms {
            #expect(arm.stored == text)
            #expect(arm.description == text)
        }
    }

    @Test func aRolloutsArmsKeepTheirDescriptionsAndCountUnderTheirCase() {
        #expect(Rollout.Arm.pin.description == "pin")
        #expect(Rollout.Arm.default.description == "default")
        #expect(Rollout.Arm.rule(id: "r-1a2b3c4d").description == "rule:r-1a2b3c4d")
        #expect(Self.caseName(CountedArm(Rollout.Arm.pin)) == "pin")
        #expect(Self.caseName(CountedArm(Rollout.Arm.default)) == "default")
        #expect(Self.caseName(CountedArm(Rollout.Arm.rule(id: "r1"))) == "rule(r1)")
        #expect(Self.caseName(CountedArm(nil)) == "latest", "no arm applied: the newest published version")
    }

    @Test func armsAreEqualAndHashAsTheirTexts() {
        #expect(CountedArm.unrecognized("pin") == .pin)
        #expect(CountedArm.unrecognized("rule:x") == .rule(id: "x"))
        #expect(Set<CountedArm>([.unrecognized("pin"), .pin, .unrecognized("rule:x"), .rule(id: "x")]).count == 2)
        #expect(CountedArm.pin != .default)
        #expect(CountedArm.rule(id: "a") != .rule(id: "b"))
    }

    @Test func armsSortAsTheirTexts() {
        // Neither the order the cases are declared in nor any order by case.
        let texts = ["unknown", "rule:b", "latest", "pin", "Zed", "default", "rule:a", "", "ü", "rule:", "pi"]
        #expect(texts.map(CountedArm.init(stored:)).sorted().map(\.stored) == texts.sorted())
        #expect(CountedArm.latest < .pin && CountedArm.default < .latest && CountedArm.rule(id: "z") < .unknown)
    }

    @Test func aCountsArmIsSentAsItsPlainText() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let count = ModelStats.Count(arm: .rule(id: "r-1a2b3c4d"), version: 3, manifests: 1, downloads: 2)
        #expect(
            String(decoding: try encoder.encode(count), as: UTF8.self)
                == #"{"arm":"rule:r-1a2b3c4d","downloads":2,"installations":0,"manifests":1,"version":3}"#)
        let total = ModelStats.Count(arm: nil, version: 3, manifests: 1, downloads: 2)
        #expect(
            String(decoding: try encoder.encode(total), as: UTF8.self) == #"{"downloads":2,"installations":0,"manifests":1,"version":3}"#)

        let decoded = try JSONDecoder().decode(
            ModelStats.Count.self, from: Data(#"{"arm":"unknown","version":1,"manifests":0,"downloads":4,"installations":0}"#.utf8))
        #expect(decoded.arm.map(Self.caseName) == "unknown")
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(
                ModelStats.Count.self, from: Data(#"{"arm":7,"version":1,"manifests":0,"downloads":4,"installations":0}"#.utf8))
        }
    }
}
