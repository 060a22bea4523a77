import Foundation
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotServer

/// A batch checked and added up for the catalog (`OutcomeBatch.record(now:)`), against the plain
/// computation and against Foundation's reading of a UUID.
@Suite struct OutcomeBatchRecordTests {
    static let now = Date(timeIntervalSince1970: 1_764_064_800)
    static let identifiers = try! IdentifierKey(secret: IdentifierKey.newSecret())

    /// A batch id is a UUID in its 36-character form, any case, stored in lower case: whatever is
    /// read, `UUID(uuidString:)` reads the same. Foundation also takes some texts with a space or
    /// a '-' where a hex digit belongs (`5f0c8a2e--b3d…` is `5F0C8A2E-F53D…`); those are refused.
    @Test func batchIDsAreReadAsFoundationReadsThem() {
        let id = "5F0C8A2E-1B3D-4C5E-9F7A-0123456789AB"
        var texts = [
            id, id.lowercased(), "5f0c8a2e-1B3D-4c5e-9F7A-0123456789ab", "", "not-a-uuid", String(id.dropLast()), id + "0",
            "{\(id)}", " \(id.dropFirst())", id.replacingOccurrences(of: "-", with: ""), "5f0c8a2e-1b3d-4c5e-9f7a0-123456789ab",
            "5f0c8a2e-1b3d-4c5e-9f7a-0123456789ag", "5f0c8a2e-1b3d-4c5e-9f7a-0123456789é",
        ]
        var random = SeededGenerator(seed: 27)
        let alphabet = Array("0123456789abcdefABCDEFgG-{} xé")
        for _ in 0..<2_000 {
            var characters = Array(id)
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                characters[Int.random(in: 0..<characters.count, using: &random)] = alphabet.randomElement(using: &random)!
            }
            texts.append(String(characters))
        }
        let canonical = /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/
        var read = 0
        for text in texts {
            guard let id = OutcomeBatch.lowercasedID(text) else {
                #expect(text.wholeMatch(of: canonical) == nil, "\(text)")
                continue
            }
            #expect(text.wholeMatch(of: canonical) != nil && id == UUID(uuidString: text)?.uuidString.lowercased(), "\(text)")
            read += 1
        }
        #expect(read > 100 && read < texts.count - 100, "both kinds are tried")
    }

    /// Random batches are added up per metric, arm, version and hour as the plain computation
    /// does; the installation's first hour per arm and version is the least hour of its kept
    /// events. Each version and arm's token is checked once: a good one counts its events for
    /// the network, one from a key no longer held keeps them apart, a bad one refuses them (and
    /// only them), and events without one are kept apart.
    @Test func randomBatchesAreAddedUpAsThePlainComputationDoes() throws {
        var random = SeededGenerator(seed: 28)
        let metrics = ["installed", "load_failed", "inference_latency_ms", "accepted", "thumbs_up"]
        let arms = ["default", "pin", "latest", "rule:r-1a2b3c4d", "rule:r-9f8e7d6c"]
        let newest = Int(Self.now.timeIntervalSince1970)
        // Totals are found one by one while they are few, through a dictionary past that: both are tried.
        var longest = 0
        for _ in 0..<200 {
            // Mostly one arm, as the SDK sends them; sometimes another in between.
            let usual = arms.randomElement(using: &random)!
            let events = (0..<Int.random(in: 1...120, using: &random)).map { _ in
                OutcomeBatch.Event(
                    metric: metrics.randomElement(using: &random)!, version: Int.random(in: 1...3, using: &random),
                    arm: Int.random(in: 0..<4, using: &random) == 0 ? arms.randomElement(using: &random)! : usual,
                    at: newest - Int.random(in: 0...20_000, using: &random),
                    value: Bool.random(using: &random) ? Double(Int.random(in: 0...5_000, using: &random)) / 8 : 1,
                    count: Bool.random(using: &random) ? Int.random(in: 1...1_000, using: &random) : nil)
            }
            var tokens: [String: String] = [:]
            for pair in Set(events.map { "\($0.arm) \($0.version)" }) {
                tokens[pair] = ["good", "old", "bad", nil].randomElement(using: &random)!
            }
            let listed = tokens.map { pair, token in
                let parts = pair.split(separator: " ")
                return OutcomeBatch.Exposure(version: Int(parts[1])!, arm: String(parts[0]), token: token)
            }
            var checks: [String] = []
            let record = try OutcomeBatch(batch: UUID().uuidString, installation: "Device-1", events: events, exposures: listed.shuffled())
                .record(now: Self.now, identifiers: Self.identifiers, network: 7) { exposure throws(DepotError) in
                    checks.append("\(exposure.arm) \(exposure.version)")
                    guard exposure.token != "bad" else { throw DepotError(.invalidExposure, "bad") }
                    return exposure.token == "good"
                }
            #expect(checks.sorted() == tokens.keys.sorted(), "each listed pair is checked once")

            var totals: [String: (count: Int, sum: Double)] = [:]
            var exposures: [String: Int] = [:]
            for (index, event) in events.enumerated() {
                let pair = "\(event.arm) \(event.version)"
                guard tokens[pair] != "bad" else {
                    #expect(record.refused.grouped.first?.events.contains(index) == true)
                    continue
                }
                let network = tokens[pair] == "good" ? 7 : 0
                let key = "\(event.metric) \(pair) \(event.at / 3_600) \(network)"
                let count = event.count ?? 1
                totals[key] = ((totals[key]?.count ?? 0) + count, (totals[key]?.sum ?? 0) + (event.value ?? Double(count)))
                exposures[pair] = min(exposures[pair] ?? .max, event.at / 3_600)
            }
            #expect(record.refused.count == events.count { tokens["\($0.arm) \($0.version)"] == "bad" })
            #expect(record.totals.count == totals.count)
            longest = max(longest, totals.count)
            for total in record.totals {
                let expected = totals["\(total.metric) \(total.arm.stored) \(total.version) \(total.hour) \(total.network)"]
                #expect(expected?.count == total.count && expected?.sum == total.sum)
            }
            #expect(record.exposures.count == exposures.count)
            #expect(record.exposures.allSatisfy { exposures["\($0.arm.stored) \($0.version)"] == $0.hour })
            #expect(
                record.exposures.allSatisfy { $0.network == (tokens["\($0.arm.stored) \($0.version)"] == "good" ? 7 : 0) })
            #expect(record.events == events.count && record.installation == Self.identifiers.installation("device-1"))
            let kept = events.filter { tokens["\($0.arm) \($0.version)"] != "bad" }
            #expect(record.appMetrics == Set(kept.map(\.metric)).intersection(["accepted", "thumbs_up"]))
        }
        #expect(longest > 2 * KeyPositions<Int>.linearCount)
    }

    /// An arm is checked whenever its text changes: a bad one after good ones is refused, naming its event.
    @Test func aBadArmAfterGoodOnesIsRefused() {
        let at = Int(Self.now.timeIntervalSince1970)
        let events = [
            OutcomeBatch.Event(metric: "installed", version: 1, arm: "rule:r-1a2b3c4d", at: at),
            OutcomeBatch.Event(metric: "accepted", version: 1, arm: "rule:r-1a2b3c4d", at: at),
            OutcomeBatch.Event(metric: "accepted", version: 1, arm: "rule:R 1", at: at),
        ]
        #expect {
            try OutcomeBatch(batch: UUID().uuidString, installation: "device-1", events: events).record(
                now: Self.now, identifiers: Self.identifiers
            ) { _ in true }
        } throws: { error in
            let message = (error as? DepotError)?.message ?? ""
            return message.hasPrefix("Event 2 ") && message.contains("arm 'rule:R 1'")
        }
    }

    /// Two tokens for one version and arm, or more tokens than a batch may have events, refuse the batch.
    @Test func aBatchListingTwoTokensForOneVersionAndArmIsRefused() {
        let at = Int(Self.now.timeIntervalSince1970)
        let events = [OutcomeBatch.Event(metric: "installed", version: 1, arm: "default", at: at)]
        let twice = [OutcomeBatch.Exposure](repeating: .init(version: 1, arm: "default", token: "t"), count: 2)
        let many = (1...OutcomeBatch.maximumEvents + 1).map { OutcomeBatch.Exposure(version: $0, arm: "default", token: "t") }
        for (exposures, says) in [(twice, "two exposure tokens for version 1 through arm 'default'"), (many, "1001 exposures")] {
            #expect {
                try OutcomeBatch(batch: UUID().uuidString, installation: "device-1", events: events, exposures: exposures).record(
                    now: Self.now, identifiers: Self.identifiers
                ) { _ in true }
            } throws: { error in
                (error as? DepotError)?.code == .invalidEvents && (error as? DepotError)?.message.contains(says) == true
            }
        }
    }
}
