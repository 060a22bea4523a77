import Foundation
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotServer

/// The fast path's JSON reader for outcome batches against `JSONDecoder`: whatever it reads,
/// `JSONDecoder` reads the same; what it does not read goes to the router.
@Suite struct OutcomeBatchReaderTests {
    func read(_ text: String) -> OutcomeBatch? {
        Array(text.utf8).withUnsafeBytes { OutcomeBatchReader.read($0) }
    }

    func decoded(_ text: String) -> OutcomeBatch? {
        try? JSONDecoder().decode(OutcomeBatch.self, from: Data(text.utf8))
    }

    static func randomBatch(_ random: inout SeededGenerator) -> OutcomeBatch {
        let metrics = ["installed", "load_failed", "inference_latency_ms", "accepted", "thumbs_up"]
        let events = (0..<Int.random(in: 0...12, using: &random)).map { _ in
            OutcomeBatch.Event(
                metric: metrics.randomElement(using: &random)!, version: Int.random(in: 1...40, using: &random),
                arm: ["default", "pin", "latest", "rule:r-1a2b3c4d"].randomElement(using: &random)!,
                at: Int.random(in: 1_700_000_000...1_800_000_000, using: &random),
                value: Bool.random(using: &random) ? Double.random(in: -1e6...1e6, using: &random) : nil,
                code: Bool.random(using: &random) ? "unsupported_model" : nil,
                count: Bool.random(using: &random) ? Int.random(in: 1...1_000_000, using: &random) : nil)
        }
        let exposures = Set(events.map { [String($0.version), $0.arm] }).filter { _ in Bool.random(using: &random) }.map {
            OutcomeBatch.Exposure(
                version: Int($0[0])!, arm: $0[1], token: "20424.\(UInt32.random(in: 0...UInt32.max, using: &random)).Kq3-_x")
        }
        return OutcomeBatch(
            batch: UUID().uuidString.lowercased(), installation: UUID().uuidString, events: events,
            dropped: Int.random(in: 0...50, using: &random), exposures: exposures)
    }

    /// What the SDK sends (`JSONEncoder`, any key order, with or without whitespace) is read as
    /// `JSONDecoder` reads it.
    @Test func readsWhatTheSDKSendsAsJSONDecoderDoes() throws {
        var random = SeededGenerator(seed: 25)
        for _ in 0..<300 {
            let batch = Self.randomBatch(&random)
            let encoder = JSONEncoder()
            for formatting in [JSONEncoder.OutputFormatting(), .sortedKeys, [.prettyPrinted, .sortedKeys]] {
                encoder.outputFormatting = formatting
                let text = String(decoding: try encoder.encode(batch), as: UTF8.self)
                let fast = try #require(read(text), "\(text)")
                #expect(fast == batch)
                #expect(fast == decoded(text))
            }
        }
    }

    @Test(arguments: [
        #"{"batch":"b","installation":"i","dropped":0,"events":[{"metric":"m","version":1,"arm":"default","at":5,"value":null,"code":null,"count":null}]}"#,
        #"{"events":[],"dropped":-3,"installation":"i","batch":"b"}"#,
        #" { "batch" : "b" , "installation":"i","dropped":0,"events":[ ] } "# + "\n",
        #"{"batch":"b","installation":"i","dropped":0,"events":[{"metric":"m","version":1,"arm":"a","at":5,"value":-0.5e-3}]}"#,
        #"{"batch":"b","installation":"i","dropped":0,"events":[{"metric":"m","version":1,"arm":"a","at":5,"value":1E+300}]}"#,
        #"{"batch":"b","installation":"i","dropped":0,"events":[{"metric":"m","version":1,"arm":"a","at":5,"value":0.1}]}"#,
        #"{"batch":"b","installation":"i","dropped":0,"events":[{"metric":"m","version":1,"arm":"a","at":5,"value":-0}]}"#,
        #"{"batch":"b","installation":"i","dropped":999999999999999999,"events":[]}"#,
        #"{"batch":"b","installation":"i","dropped":0,"events":[],"exposures":[]}"#,
        #"{"exposures":[{"token":"t","arm":"pin","version":2},{"version":3,"arm":"a","token":"u"}],"batch":"b","installation":"i","dropped":0,"events":[]}"#,
    ])
    func readsPlainJSONAsJSONDecoderDoes(_ text: String) throws {
        let fast = try #require(read(text))
        #expect(fast == decoded(text))
    }

    /// Numbers of up to 15 digits without an exponent (read without `Double(String)`) and longer
    /// ones are read to the same bits as `JSONDecoder` reads them.
    @Test func readsDecimalsAsJSONDecoderDoes() throws {
        var random = SeededGenerator(seed: 26)
        for _ in 0..<5_000 {
            func digits(_ count: ClosedRange<Int>) -> String {
                String((0..<Int.random(in: count, using: &random)).map { _ in "0123456789".randomElement(using: &random)! })
            }
            let leading = digits(0...9).drop { $0 == "0" }
            var number = leading.isEmpty ? "0" : String(leading)
            if Bool.random(using: &random) { number += "." + digits(1...12) }
            if Bool.random(using: &random) { number = "-" + number }
            let text =
                #"{"batch":"b","installation":"i","dropped":0,"events":[{"metric":"m","version":1,"arm":"a","at":5,"value":"# + number
                + "}]}"
            let expected = try #require(decoded(text)?.events.first?.value, "\(text)")
            let fast = try #require(read(text)?.events.first?.value, "\(text)")
            #expect(fast.bitPattern == expected.bitPattern, "\(text): \(fast) against \(expected)")
        }
    }

    /// Valid JSON outside the plain subset, and invalid JSON, go to the router.
    @Test(arguments: [
        #"{"batch":"b","installation":"i","dropped":0,"events":[],"extra":1}"#,
        #"{"batch":"b","batch":"c","installation":"i","dropped":0,"events":[]}"#,
        #"{"batch":"\u0062","installation":"i","dropped":0,"events":[]}"#,
        #"{"batch":"b\"","installation":"i","dropped":0,"events":[]}"#,
        "{\"batch\":\"bé\",\"installation\":\"i\",\"dropped\":0,\"events\":[]}",
        #"{"batch":"b","installation":"i","dropped":0.0,"events":[]}"#,
        #"{"batch":"b","installation":"i","dropped":1e2,"events":[]}"#,
        #"{"batch":"b","installation":"i","dropped":01,"events":[]}"#,
        #"{"batch":"b","installation":"i","dropped":-0,"events":[]}"#,
        #"{"batch":"b","installation":"i","dropped":9999999999999999999,"events":[]}"#,
        #"{"batch":"b","installation":"i","dropped":null,"events":[]}"#,
        #"{"batch":"b","installation":"i","events":[]}"#,
        #"{"batch":"b","installation":"i","dropped":0,"events":[]}x"#,
        #"{"batch":"b","installation":"i","dropped":0,"events":[],}"#,
        #"{"batch":"b","installation":"i","dropped":0,"events":[{}]}"#,
        #"{"batch":"b","installation":"i","dropped":0,"events":[{"metric":"m","version":1,"arm":"a","at":5,"value":1e400}]}"#,
        #"{"batch":"b","installation":"i","dropped":0,"events":[{"metric":"m","version":1,"arm":"a","at":5,"value":1e-400}]}"#,
        #"{"batch":"b","installation":"i","dropped":0,"events":[{"metric":"m","version":1,"arm":"a","at":5,"value":.5}]}"#,
        #"{"batch":"b","installation":"i","dropped":0,"events":[{"metric":"m","version":1,"arm":"a","at":5,"value":1.}]}"#,
        #"{"batch":"b","installation":"i","dropped":0,"events":[{"metric":"m","version":1,"arm":"a","at":5,"value":"1"}]}"#,
        #"{"batch":"b","installation":"i","dropped":0,"events":[{"metric":"m","version":1,"arm":"a","at":5}"#,
        #"[{"batch":"b","installation":"i","dropped":0,"events":[]}]"#,
        #"{"batch":"b","installation":"i","dropped":0,"events":[],"exposures":null}"#,
        #"{"batch":"b","installation":"i","dropped":0,"events":[],"exposures":[{"version":1,"arm":"a"}]}"#,
        #"{"batch":"b","installation":"i","dropped":0,"events":[],"exposures":[{"version":1,"arm":"a","token":"t","token":"u"}]}"#,
        #"{"batch":"b","installation":"i","dropped":0,"events":[],"exposures":{"version":1,"arm":"a","token":"t"}}"#,
        #"{"batch":"b","installation":"i","dropped":0,"events":[],"exposures":[],"exposures":[]}"#,
        "",
    ])
    func leavesAnythingElseToTheRouter(_ text: String) {
        #expect(read(text) == nil, "\(text)")
    }

    /// Bytes changed at random in batches the SDK would send: whatever the reader still reads,
    /// `JSONDecoder` reads the same.
    @Test func whateverItReadsJSONDecoderReadsTheSame() throws {
        var random = SeededGenerator(seed: 2_025)
        let alphabet = Array(#"{}[]":,.-+eE0123456789 nul\x"#.utf8)
        var readable = 0
        for _ in 0..<3_000 {
            var bytes = Array(try JSONEncoder().encode(Self.randomBatch(&random)))
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let index = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[index] = alphabet.randomElement(using: &random)!
                case 1: bytes.remove(at: index)
                default: bytes.insert(alphabet.randomElement(using: &random)!, at: index)
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            guard let batch = bytes.withUnsafeBytes({ OutcomeBatchReader.read($0) }) else { continue }
            readable += 1
            #expect(batch == (try? JSONDecoder().decode(OutcomeBatch.self, from: Data(bytes))), "\(text)")
        }
        #expect(readable > 100, "the mutations left \(readable) batches readable: the comparison compared too few")
    }
}
