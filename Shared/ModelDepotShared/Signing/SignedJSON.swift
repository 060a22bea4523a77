import Foundation

/// The JSON of signed documents: sorted keys and whole-second ISO 8601 dates, so that what a
/// signer encodes is what a verifier decodes. Signatures cover the exact payload bytes, so no
/// canonical form is needed to verify; this only keeps payloads tidy and diffable.
public enum SignedJSON {
    /// Encodes a payload.
    public static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// Decodes a payload.
    public static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
