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
    /// does; the installation's first hour per arm and version is the least hour of its events.
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
            let record = try OutcomeBatch(batch: UUID().uuidString, installation: "Device-1", events: events).record(
                now: Self.now, identifiers: Self.identifiers
            ) { _, _ in true }

            var totals: [String: (count: Int, sum: Double)] = [:]
            var exposures: [String: Int] = [:]
            for event in events {
                let key = "\(event.metric) \(event.arm) \(event.version) \(event.at / 3_600)"
                let count = event.count ?? 1
                totals[key] = ((totals[key]?.count ?? 0) + count, (totals[key]?.sum ?? 0) + (event.value ?? Double(count)))
                let exposure = "\(event.arm) \(event.version)"
                exposures[exposure] = min(exposures[exposure] ?? .max, event.at / 3_600)
            }
            #expect(record.totals.count == totals.count)
            longest = max(longest, totals.count)
            for total in record.totals {
                let expected = totals["\(total.metric) \(total.arm.stored) \(total.version) \(total.hour)"]
                #expect(expected?.count == total.count && expected?.sum == total.sum)
            }
            #expect(record.exposures.count == exposures.count)
            #expect(record.exposures.allSatisfy { exposures["\($0.arm.stored) \($0.version)"] == $0.hour })
            #expect(record.events == events.count && record.installation == Self.identifiers.installation("device-1"))
            #expect(record.appMetrics == Set(events.map(\.metric)).intersection(["accepted", "thumbs_up"]))
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
            ) { _, _ in true }
        } throws: { error in
            let message = (error as? DepotError)?.message ?? ""
            return message.hasPrefix("Event 2 ") && message.contains("arm 'rule:R 1'")
        }
    }
}
