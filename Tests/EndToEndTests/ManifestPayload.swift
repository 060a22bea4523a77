import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// The manifest inside a signed envelope, read without checking its signatures: for tests about
/// what the server chose, not about trust.
func manifestPayload(_ data: Data) throws -> ModelManifest {
    let envelope = try JSONDecoder().decode(SignedEnvelope.self, from: data)
    return try SignedJSON.decoder.decode(ModelManifest.self, from: try #require(Data(base64Encoded: envelope.payload)))
}

extension Program.Output {
    /// The manifest this output (a curl of the manifest endpoint) holds.
    func manifest() throws -> ModelManifest { try manifestPayload(output) }
}
