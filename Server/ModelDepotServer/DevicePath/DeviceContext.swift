import HTTPTypes
import Hummingbird
import ModelDepotShared

extension DeviceContext {
    /// Parses the `Depot-*` headers; a malformed `Depot-Attributes` or an over-long value is a 400.
    /// The country comes from `Depot-Country`, else from what a CDN in front sets
    /// (`CF-IPCountry`, `CloudFront-Viewer-Country`).
    init(headers: some DeviceFields) throws {
        func value(_ field: DeviceField) throws -> String? {
            guard let value = headers[device: field] else { return nil }
            guard value.utf8.count <= 256 else {
                throw DepotError(.badRequest, "Header \(field.name) is \(value.utf8.count) bytes long; at most 256 are accepted.")
            }
            return value
        }
        let attributes = try headers[device: .attributes].map { try DeviceAttributes.decode($0) } ?? [:]
        self.init(
            installationID: try value(.installationID), platform: try value(.platform),
            appVersion: try value(.appVersion), osVersion: try value(.osVersion),
            sdkVersion: try value(.sdkVersion),
            country: try value(.country) ?? value(.cloudflareCountry) ?? value(.cloudFrontCountry), attributes: attributes)
    }
}
