import HTTPTypes
import ModelDepotShared

/// ModelDepot's own header fields, named once in ``DepotHeader`` (shared with the SDK and CLI).
extension HTTPField.Name {
    static let depotContentSHA256 = Self(DepotHeader.contentSHA256)!
    static let depotContentLength = Self(DepotHeader.contentLength)!
    static let depotCompanionFiles = Self(DepotHeader.companionFiles)!
    static let depotInstallationID = Self(DepotHeader.installationID)!
    static let depotPlatform = Self(DepotHeader.platform)!
    static let depotAppVersion = Self(DepotHeader.appVersion)!
    static let depotOSVersion = Self(DepotHeader.osVersion)!
    static let depotSDKVersion = Self(DepotHeader.sdkVersion)!
    static let depotCountry = Self(DepotHeader.country)!
    static let depotAttributes = Self(DepotHeader.attributes)!
    static let cloudflareCountry = Self("CF-IPCountry")!
    static let cloudFrontCountry = Self("CloudFront-Viewer-Country")!
    static let depotRootVersion = Self(DepotHeader.rootVersion)!
    static let depotExposure = Self(DepotHeader.exposure)!
    static let depotRequestID = Self(DepotHeader.requestID)!
    static let xForwardedFor = Self("X-Forwarded-For")!
    static let xForwardedProto = Self("X-Forwarded-Proto")!
}
