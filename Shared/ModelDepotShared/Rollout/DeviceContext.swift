/// What a device says about itself with a manifest request (the `Depot-*` headers); rollout
/// conditions match on it. Conditions never feed the bucket hash.
public struct DeviceContext: Sendable, Hashable, Codable {
    /// The installation id, lower-cased.
    public var installationID: String?
    /// `ios`, `android`, `linux`, `macos`, … lower-cased.
    public var platform: String?
    /// The app's version, e.g. `3.2.0`.
    public var appVersion: String?
    /// The operating system's version, e.g. `17.4`.
    public var osVersion: String?
    /// The SDK's version.
    public var sdkVersion: String?
    /// An ISO 3166 country code, upper-cased.
    public var country: String?
    /// Custom attributes for targeting.
    public var attributes: [String: String]

    /// Creates a context, normalising case where the field is case-insensitive.
    public init(
        installationID: String? = nil, platform: String? = nil, appVersion: String? = nil, osVersion: String? = nil,
        sdkVersion: String? = nil, country: String? = nil, attributes: [String: String] = [:]
    ) {
        self.installationID = installationID.map { Self.cased($0, upper: false) }
        self.platform = platform.map { Self.cased($0, upper: false) }
        self.appVersion = appVersion
        self.osVersion = osVersion
        self.sdkVersion = sdkVersion
        self.country = country.map { Self.cased($0, upper: true) }
        self.attributes = attributes
    }

    /// `text` upper- or lower-cased: the same string when it is ASCII already in that case (as
    /// the SDK sends it), which spares a copy for every request.
    package static func cased(_ text: String, upper: Bool) -> String {
        let other: ClosedRange<UInt8> = upper ? 0x61...0x7A : 0x41...0x5A
        func isCased(_ bytes: some Sequence<UInt8>) -> Bool { bytes.allSatisfy { $0 < 0x80 && !other.contains($0) } }
        if text.utf8.withContiguousStorageIfAvailable(isCased) ?? isCased(text.utf8) { return text }
        return upper ? text.uppercased() : text.lowercased()
    }
}
