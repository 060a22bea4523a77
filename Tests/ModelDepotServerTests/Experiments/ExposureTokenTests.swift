import Crypto
import Foundation
import ModelDepotRollouts
import ModelDepotShared
import Testing

@testable import ModelDepotServer

/// The exposure tokens manifest answers carry: only the server's token for this installation,
/// model, version and arm checks, for 8 days; the client networks and hourly allowances that
/// decide which installations count.
@Suite struct ExposureTokenTests {
    let key = ExposureToken.Key(signingKey: Curve25519.Signing.PrivateKey())
    let flowers = try! ModelName("flowers")
    let day = 20_424

    func token(
        model: String = "flowers", version: Int = 2, arm: CountedArm = .rule(id: "r-1a2b3c4d"), installation: String = "Device-1",
        day: Int? = nil, key: ExposureToken.Key? = nil
    ) -> String {
        ExposureToken.make(
            model: try! ModelName(model), version: version, arm: arm, installation: installation, day: day ?? self.day,
            key: key ?? self.key)
    }

    /// The code a token is refused with for an event of version 2 through `rule:r-1a2b3c4d` from
    /// `device-1` on `today`, `nil` when it checks (`unrecognized` when it is kept uncounted).
    func refusal(_ token: String, version: Int = 2, arm: String = "rule:r-1a2b3c4d", today: Int? = nil) -> DepotError.Code? {
        do {
            let counts = try ExposureToken.check(
                token, model: flowers, version: version, arm: arm, installation: "device-1", today: today ?? day, keys: [key])
            return counts ? nil : .unrecognized
        } catch {
            return error.code
        }
    }

    @Test func theServersTokenChecksForItsInstallationModelVersionAndArmOnly() {
        let made = token()
        #expect(made.hasPrefix("\(day).\(key.hint).") && made.utf8.count == "\(day).".utf8.count + 5 + 22)
        #expect(refusal(made) == nil, "the installation id is read in any case")
        #expect(refusal(made, today: day + ExposureToken.acceptedDays) == nil, "accepted for 8 days")
        #expect(refusal(token(installation: "device-2")) == .invalidExposure, "another installation's")
        #expect(refusal(token(model: "birds")) == .invalidExposure, "another model's")
        #expect(refusal(made, version: 1) == .invalidExposure, "another version")
        #expect(refusal(made, arm: "default") == .invalidExposure, "another arm")
        #expect(
            refusal(token(key: .init(signingKey: Curve25519.Signing.PrivateKey()))) == .unrecognized,
            "a key this server does not hold (rotated away): kept, not counted")
        #expect(refusal(made, today: day + ExposureToken.acceptedDays + 1) == .expiredExposure, "9 days old")
        #expect(refusal(token(day: day + 1)) == nil, "a replica's clock a little ahead across midnight")
        #expect(refusal(token(day: day + 2)) == .expiredExposure, "two days ahead of the server")
    }

    @Test func aMalformedOrTamperedTokenIsRefusedAsInvalid() {
        let made = token()
        let hint = key.hint
        let mac = made.split(separator: ".")[2]
        let flipped = String(mac.dropLast()) + (mac.last == "A" ? "B" : "A")
        let forged = [
            "", ".", "\(day)", "\(day).", "\(day).\(hint)", "\(day).\(hint).", ".\(hint).\(mac)", "\(day).\(hint).\(flipped)",
            "\(day + 1).\(hint).\(mac)", "0\(day).\(hint).\(mac)", "+\(day).\(hint).\(mac)", "-0.\(hint).\(mac)",
            "\(day).\(hint).\(mac)=", "\(day).\(hint).\(mac)A", "\(day).\(hint).\(mac.dropLast())", "\(day) .\(hint).\(mac)",
            "\(day).\(hint).\(mac).\(mac)", "\(day).\(hint.uppercased()).\(mac)", "\(day).\(hint)0.\(mac)", "\(day).\(mac)",
            String(repeating: "9", count: 40) + ".\(hint).\(mac)", made + String(repeating: "A", count: 64), "\u{0}\(made)",
        ]
        // A hint of digits only reads the same upper-cased: that case is then the token itself.
        for text in forged where text != made {
            #expect(refusal(text) == .invalidExposure, "\(text)")
        }
    }

    @Test func randomTextsNeverCheck() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789.-_+=/abcdefABCDEF ü\u{0}".unicodeScalars)
        for _ in 0..<5_000 {
            let text = String(
                String.UnicodeScalarView((0..<Int.random(in: 0...40, using: &generator)).map { _ in alphabet.randomElement()! }))
            #expect(refusal(text) != nil, "\(text)")
        }
        // With this server's key named, a made-up MAC is refused, never kept.
        for _ in 0..<1_000 {
            let mac = TokenText.base64URL((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
            #expect(refusal("\(day).\(key.hint).\(mac)") == .invalidExposure)
        }
    }

    @Test func aNetworkIsAnIPv4Slash24OrAnIPv6Slash64UnlessToldOtherwise() throws {
        let key = try IdentifierKey(secret: IdentifierKey.newSecret())
        func id(_ address: String?) -> Int64 { ClientNetwork.id(address, NetworkPrefixes(), key: key) }
        #expect(id("203.0.113.7") == id("203.0.113.250"))
        #expect(id("203.0.113.7") == id("::ffff:203.0.113.9"), "an IPv4-mapped address is its IPv4 network")
        #expect(id("203.0.113.7") != id("203.0.114.7"))
        #expect(id("2001:db8:1:2::1") == id("2001:db8:1:2:ffff::9"))
        #expect(id("2001:db8:1:2::1") != id("2001:db8:1:3::1"))
        #expect(id(nil) == id("not an address"), "no address is one network")
        let ids = (0..<2_000).map { id("10.\($0 / 256).\($0 % 256).1") }
        #expect(Set(ids).count == 2_000 && ids.allSatisfy { $0 > 0 })

        let wide = try NetworkPrefixes("20,48")
        func wideID(_ address: String) -> Int64 { ClientNetwork.id(address, wide, key: key) }
        #expect(wideID("2001:db8:1:2::1") == wideID("2001:db8:1:ffff::1") && wideID("2001:db8:1::1") != wideID("2001:db8:2::1"))
        #expect(wideID("203.0.113.7") == wideID("203.0.127.7") && wideID("203.0.113.7") != wideID("203.0.128.7"), "a /20")
        #expect(
            id("203.0.0.0") != ClientNetwork.id("203.0.0.0", try NetworkPrefixes("16,64"), key: key),
            "a /16 is another network than its first /24")
        for bad in ["", "24", "24,", "7,64", "24,129", "33,64", "24,64,1", "a,b", " 24,64"] {
            #expect(throws: DepotError.self, "\(bad)") { try NetworkPrefixes(bad) }
        }
    }

    @Test func aNetworkAddsItsFirstInstallationsOfEachHourOnly() {
        let budget = NetworkBudget(perHour: 3, maximumTracked: 5)
        let birds = try! ModelName("birds")
        #expect((1...5).map { budget.admits(model: flowers, network: 7, installation: $0, hour: 10) } == [true, true, true, false, false])
        #expect(budget.admits(model: flowers, network: 7, installation: 2, hour: 10), "one already counted stays counted")
        #expect(budget.admits(model: birds, network: 7, installation: 4, hour: 10), "each model has its own")
        #expect(budget.admits(model: flowers, network: 8, installation: 4, hour: 10))
        #expect(!budget.admits(model: flowers, network: 9, installation: 5, hour: 10), "5 tracked in the hour: no more")
        #expect(budget.admits(model: flowers, network: 7, installation: 4, hour: 11), "a new hour starts afresh")
        #expect(budget.admits(model: flowers, network: 7, installation: 9, hour: 10), "a late batch counts in the new hour")
    }
}
