/// A model's name: 1–64 characters of `[a-z0-9._-]`, starting with a letter or digit.
///
/// Names appear in URLs and file names, so anything else is rejected up front:
///
/// ```swift
/// let name = try ModelName("flowers-v2")
/// ```
public struct ModelName: Hashable, Sendable, Codable, CustomStringConvertible, Comparable {
    /// The name as text.
    public let rawValue: String

    /// Validates a name.
    /// - Parameter rawValue: The proposed name.
    /// - Throws: ``DepotError`` (`invalid_name`) saying which rule the name breaks.
    public init(_ rawValue: String) throws(DepotError) {
        let bytes = rawValue.utf8
        guard (1...64).contains(bytes.count) else {
            throw DepotError(
                .invalidName,
                "Model name '\(rawValue.prefix(80))' has \(bytes.count) characters; use 1 to 64 characters of a-z, 0-9, '.', '_' and '-'.")
        }
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
        guard isAlphanumeric(bytes[bytes.startIndex]),
            bytes.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") })
        else {
            throw DepotError(
                .invalidName,
                "Model name '\(rawValue)' is not allowed: use a-z, 0-9, '.', '_' and '-', starting with a letter or digit (for example 'flowers-v2')."
            )
        }
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static func < (lhs: ModelName, rhs: ModelName) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self = try ModelName(try container.decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
