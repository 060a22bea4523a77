import HTTPTypes
import Hummingbird
import ModelDepotShared

extension DeviceContext {
    /// Parses the `Depot-*` headers; a malformed `Depot-Attributes` or an over-long value is a 400.
    /// The attributes are checked but not kept (``decodeAttributes(from:)`` adds them, for a
    /// rollout whose condition reads one). The country comes from `Depot-Country`, else from what
    /// a CDN in front sets (`CF-IPCountry`, `CloudFront-Viewer-Country`).
    init(headers: some DeviceFields) throws {
        func value(_ field: DeviceField) throws -> String? {
            guard let value = headers[device: field] else { return nil }
            guard value.utf8.count <= 256 else {
                throw DepotError(.badRequest, "Header \(field.name) is \(value.utf8.count) bytes long; at most 256 are accepted.")
            }
            return value
        }
        if let header = headers[device: .attributes] { try DeviceAttributes.check(header) }
        self.init(
            installationID: try value(.installationID), platform: try value(.platform),
            appVersion: try value(.appVersion), osVersion: try value(.osVersion),
            sdkVersion: try value(.sdkVersion),
            country: try value(.country) ?? value(.cloudflareCountry) ?? value(.cloudFrontCountry))
    }

    /// Adds the attributes the headers carry (checked already by ``init(headers:)``).
    mutating func decodeAttributes(from headers: some DeviceFields) throws {
        if let header = headers[device: .attributes] { attributes = try DeviceAttributes.decode(header) }
    }
}
