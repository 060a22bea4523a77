import Foundation
import ModelDepotShared
import Testing

/// The verifier's list of tensors with constant data (what a patch maker lines up) agrees with
/// the TFLite schema's own Python classes, as `scripts/tflite/make_delta_fixtures.py` wrote them
/// to `constants.json`: names, types, where the data is, and which operator input first reads it.
@Suite struct TFLiteConstantTensorTests {
    struct Listed: Decodable, Equatable {
        let subgraph: Int
        let name: String
        let type: Int
        let offset: Int
        let size: Int
        let firstUse: [Int]?
    }

    @Test(arguments: ["base", "finetuned"])
    func constantsAreWhereTheSchemaSaysTheyAre(file: String) throws {
        let directory = Repository.tfliteFixtures.appendingPathComponent("delta")
        let listing = try JSONDecoder().decode(
            [String: [Listed]].self, from: Data(contentsOf: directory.appendingPathComponent("constants.json")))
        let expected = try #require(listing["\(file).tflite"])
        let bytes = try Repository.bytes(of: directory.appendingPathComponent("\(file).tflite"))
        let constants = try bytes.withUnsafeBytes { try TFLiteVerifier().constantTensors(in: $0) }
        let read = constants.map {
            Listed(
                subgraph: $0.subgraph, name: $0.name, type: $0.type.rawValue, offset: $0.data.lowerBound, size: $0.data.count,
                firstUse: $0.firstUse.map { [$0.operatorIndex, $0.inputIndex] })
        }
        #expect(read == expected)
        #expect(expected.count == 4, "the fixture has four constants")
    }

    @Test func anInvalidModelHasNoList() throws {
        var bytes = try Repository.bytes(of: Repository.fixture("float_classifier"))
        bytes[4] = UInt8(ascii: "X")
        #expect(throws: DepotError.self) { try bytes.withUnsafeBytes { try TFLiteVerifier().constantTensors(in: $0) } }
    }
}
