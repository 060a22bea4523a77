import HTTPTypes
import Hummingbird
import ModelDepotShared

extension DeviceContext {
    /// Parses the `Depot-*` headers; a malformed `Depot-Attributes` or an over-long value is a 400.
    /// The country comes from `Depot-Country`, else from what a CDN in front sets
    /// (`CF-IPCountry`, `CloudFront-Viewer-Country`).
    init(headers: HTTPFields) throws {
        func value(_ name: HTTPField.Name) throws -> String? {
            guard let value = headers.value(name) else { return nil }
            guard value.utf8.count <= 256 else {
                throw DepotError(.badRequest, "Header \(name) is \(value.utf8.count) bytes long; at most 256 are accepted.")
            }
            return value
        }
        let attributes = try headers.value(.depotAttributes).map { try DeviceAttributes.decode($0) } ?? [:]
        self.init(installationID: try value(.depotInstallationID), platform: try value(.depotPlatform),
                  appVersion: try value(.depotAppVersion), osVersion: try value(.depotOSVersion),
                  sdkVersion: try value(.depotSDKVersion),
                  country: try value(.depotCountry) ?? value(.cloudflareCountry) ?? value(.cloudFrontCountry), attributes: attributes)
    }
}
