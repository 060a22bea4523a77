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
        var attributes: [String: String] = [:]
        if let header = headers.value(.depotAttributes) {
            guard header.utf8.count <= 4096 else {
                throw DepotError(.badRequest, "Depot-Attributes is \(header.utf8.count) bytes long; at most 4096 are accepted.")
            }
            for pair in header.split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2, let key = parts[0].trimmingSpaces.removingPercentEncoding, !key.isEmpty,
                      let value = parts[1].trimmingSpaces.removingPercentEncoding else {
                    throw DepotError(.badRequest, "Depot-Attributes entry '\(pair.prefix(80))' is not key=value with percent-encoded key and value (e.g. 'tier=gold,beta=true').")
                }
                attributes[key] = value
            }
        }
        self.init(installationID: try value(.depotInstallationID), platform: try value(.depotPlatform),
                  appVersion: try value(.depotAppVersion), osVersion: try value(.depotOSVersion),
                  sdkVersion: try value(.depotSDKVersion),
                  country: try value(.depotCountry) ?? value(.cloudflareCountry) ?? value(.cloudFrontCountry), attributes: attributes)
    }
}
