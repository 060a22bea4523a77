import Foundation
import ModelDepotShared
import Testing

/// Every truncation and every single-byte change of every fixture: the verifier returns or
/// throws a `DepotError` (never crashes or hangs), and whatever it accepts loads in real
/// LiteRT without crashing.
@Suite struct TFLiteMutationTests {
    /// The single-byte changes applied at every position.
    static let changes: [@Sendable (UInt8) -> UInt8] = [{ $0 ^ 0xff }, { $0 &+ 1 }]

    struct Survey {
        var rejected = 0
        var accepted: [(name: String, bytes: [UInt8])] = []
    }

    static func survey(_ fixture: URL) throws -> Survey {
        let original = try Repository.bytes(of: fixture)
        var survey = Survey()
        for position in original.indices {
            for (index, change) in changes.enumerated() {
                var bytes = original
                bytes[position] = change(bytes[position])
                if failure(of: bytes) == nil {
                    survey.accepted.append(("\(fixture.deletingPathExtension().lastPathComponent)-\(position)-\(index)", bytes))
                } else {
                    survey.rejected += 1
                }
            }
        }
        return survey
    }

    @Test(arguments: try Repository.fixtures())
    func everyTruncationIsRejectedOrReadsTheSameModel(fixture: URL) throws {
        let original = try Repository.bytes(of: fixture)
        let model = try TFLiteVerifier().verify(original)
        var rejected = 0
        for length in 0..<original.count {
            let truncated = Array(original.prefix(length))
            guard let accepted = try? TFLiteVerifier().verify(truncated) else {
                rejected += 1
                continue
            }
            #expect(accepted.subgraphs == model.subgraphs, "truncated to \(length) bytes")
            #expect(accepted.signatures == model.signatures, "truncated to \(length) bytes")
            #expect(length >= model.flatbufferSize - 15, "truncated to \(length) bytes, inside the flatbuffer")
        }
        #expect(rejected >= model.flatbufferSize - 16)
    }

    @Test(arguments: try Repository.fixtures())
    func everyByteChangeIsRejectedOrAccepted(fixture: URL) throws {
        let survey = try Self.survey(fixture)
        #expect(survey.rejected > 0)
        // A change anywhere in the root offset or the identifier is always caught.
        let original = try Repository.bytes(of: fixture)
        for position in 0..<8 {
            for change in Self.changes {
                var bytes = original
                bytes[position] = change(bytes[position])
                #expect(failure(of: bytes) != nil, "byte \(position) changed was accepted")
            }
        }
    }

    @Test func acceptedMutationsLoadInLiteRTWithoutCrashing() async throws {
        let directory = try TemporaryDirectory()
        var written = 0
        for fixture in try Repository.fixtures() {
            for mutant in try Self.survey(fixture).accepted {
                try Data(mutant.bytes).write(to: directory.url.appendingPathComponent(mutant.name + ".tflite"))
                written += 1
            }
        }
        let outcomes = try await LiteRT.load(directory: directory.url)
        #expect(outcomes.count == written)
        let failures = outcomes.filter { $0.outcome == "crashed" || $0.outcome == "hang" }
        #expect(
            failures.isEmpty,
            "LiteRT crashed or hung on files the verifier accepted: \(failures.prefix(20).map { "\(URL(fileURLWithPath: $0.file).lastPathComponent) \($0.outcome) \($0.signal ?? "")" })"
        )
    }
}
