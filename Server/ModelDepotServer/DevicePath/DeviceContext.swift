import HTTPTypes
import Hummingbird
import ModelDepotShared

extension DeviceContext {
    /// Parses the `Depot-*` headers; a malformed `Depot-Attributes` or an over-long value is a 400.
    /// The attributes are always checked, and kept only `withAttributes` (when a rollout's
    /// condition reads them). The country comes from `Depot-Country`, else from what a CDN in
    /// front sets (`CF-IPCountry`, `CloudFront-Viewer-Country`).
    init(headers: some DeviceFields, withAttributes: Bool) throws {
        func value(_ field: DeviceField) throws -> String? {
            guard let value = headers[device: field] else { return nil }
            guard value.utf8.count <= 256 else {
                throw DepotError(.badRequest, "Header \(field.name) is \(value.utf8.count) bytes long; at most 256 are accepted.")
            }
            return value
        }
        var attributes: [String: String] = [:]
        if let header = headers[device: .attributes] {
            if withAttributes { attributes = try DeviceAttributes.decode(header) } else { try DeviceAttributes.check(header) }
        }
        self.init(
            installationID: try value(.installationID), platform: try value(.platform),
            appVersion: try value(.appVersion), osVersion: try value(.osVersion),
            sdkVersion: try value(.sdkVersion),
            country: try value(.country) ?? value(.cloudflareCountry) ?? value(.cloudFrontCountry), attributes: attributes)
    }
}
