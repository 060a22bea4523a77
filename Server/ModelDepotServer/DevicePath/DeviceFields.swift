import HTTPTypes

/// The request header fields the two device requests are answered from (the manifest and the
/// blob it names): what ``ManifestController`` and ``BlobsController`` read, and all that
/// ``FastPathRequestHead`` keeps of a request.
enum DeviceField: Int, CaseIterable, Sendable {
    case authorization, ifNoneMatch, range, ifRange
    case installationID, platform, appVersion, osVersion, sdkVersion, country, attributes, cloudflareCountry, cloudFrontCountry
    /// The exposure token the device holds for the version it has (``ExposureToken/isMadeToday(_:today:key:)``).
    case exposure
    /// Read only from a trusted proxy, for the client's address (``TrustedProxies``).
    case forwardedFor

    var name: HTTPField.Name {
        switch self {
        case .authorization: .authorization
        case .ifNoneMatch: .ifNoneMatch
        case .range: .range
        case .ifRange: .ifRange
        case .installationID: .depotInstallationID
        case .platform: .depotPlatform
        case .appVersion: .depotAppVersion
        case .osVersion: .depotOSVersion
        case .sdkVersion: .depotSDKVersion
        case .country: .depotCountry
        case .attributes: .depotAttributes
        case .cloudflareCountry: .cloudflareCountry
        case .cloudFrontCountry: .cloudFrontCountry
        case .exposure: .depotExposure
        case .forwardedFor: .xForwardedFor
        }
    }
}

/// A request's ``DeviceField``s: the router's `HTTPFields`, or the ``FastPathFields`` that
/// ``FastPathRequestHead`` read.
protocol DeviceFields {
    /// The field's value (repeated fields joined with `, `), or `nil`.
    subscript(device field: DeviceField) -> String? { get }
}

extension HTTPFields: DeviceFields {
    subscript(device field: DeviceField) -> String? { value(field.name) }
}

/// The ``DeviceField``s of a request read straight from its bytes, one slot each.
struct FastPathFields: DeviceFields, Equatable, Sendable {
    private var values = [String?](repeating: nil, count: DeviceField.allCases.count)

    subscript(device field: DeviceField) -> String? { values[field.rawValue] }

    /// Sets a field; `false` if it was set already (a repeated field is left to the router).
    mutating func set(_ field: DeviceField, _ value: String) -> Bool {
        guard values[field.rawValue] == nil else { return false }
        values[field.rawValue] = value
        return true
    }
}
