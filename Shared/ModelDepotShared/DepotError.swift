/// The one error type of ModelDepot: a stable code and a message that says what failed,
/// with which value, and what to do next.
///
/// The server sends it as `{"error": {"code": …, "message": …}}`; the SDK and the CLI decode
/// the same body, so a caller sees the same code wherever an error was raised.
///
/// ```swift
/// do {
///     _ = try TFLiteVerifier().verify(bytes)
/// } catch let error as DepotError where error.code == .indexOutOfRange {
///     print(error.message)
/// }
/// ```
public struct DepotError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// A stable, machine-readable error code. New codes are added as static members.
    public struct Code: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        /// The code as it appears on the wire, in `snake_case`.
        public let rawValue: String

        /// Creates a code from its wire spelling.
        /// - Parameter rawValue: The `snake_case` code.
        public init(rawValue: String) { self.rawValue = rawValue }

        init(_ rawValue: String) { self.rawValue = rawValue }

        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// A sentence for people: what failed, with which value, and what to do next.
    public let message: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: The stable code.
    ///   - message: What failed, with which value, and what to do next.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(message) [\(code)]" }
}
