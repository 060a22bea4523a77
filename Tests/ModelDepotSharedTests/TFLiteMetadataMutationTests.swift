import Foundation
import ModelDepotShared
import Testing

/// Every single-byte change and every truncation of models with metadata and a zip of associated
/// files (stored and deflated): the verifier returns or throws a `DepotError`, never crashes or
/// hangs, and whatever it accepts describes itself (encodes to JSON).
@Suite struct TFLiteMetadataMutationTests {
    static let fixtures = ["described_classifier", "object_detector", "image_classifier_uint8"]

    @Test(arguments: fixtures)
    func everyByteChangeAndTruncationIsRejectedOrDescribed(fixture: String) throws {
        let original = try Repository.bytes(of: Repository.metadataFixtures.appendingPathComponent("\(fixture).tflite"))
        let model = try TFLiteVerifier().verify(original)
        let metadataAndZip = model.flatbufferSize - 600
        var rejected = 0, accepted = 0
        var codes = Set<DepotError.Code>()
        for position in original.indices {
            for change: (UInt8) -> UInt8 in [{ $0 ^ 0xFF }, { $0 &+ 1 }] {
                var bytes = original
                bytes[position] = change(bytes[position])
                switch Result(catching: { () throws(DepotError) in try TFLiteVerifier().verify(bytes) }) {
                case .success(let described):
                    _ = try JSONEncoder().encode(described)
                    accepted += 1
                case .failure(let error):
                    if position >= metadataAndZip { codes.insert(error.code) }
                    rejected += 1
                }
            }
        }
        for length in stride(from: 0, to: original.count, by: 3) {
            _ = try? TFLiteVerifier().verify(Array(original.prefix(length)))
        }
        #expect(rejected > 0 && accepted > 0)
        // Damage in the metadata and the zip is named as such.
        #expect(!codes.isDisjoint(with: [.invalidModelMetadata, .invalidAssociatedFiles, .associatedFileMissing]), "\(codes)")
    }
}

extension Result where Failure == DepotError {
    init(catching body: () throws(DepotError) -> Success) {
        do { self = .success(try body()) } catch { self = .failure(error) }
    }
}
