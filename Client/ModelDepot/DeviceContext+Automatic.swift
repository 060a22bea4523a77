import Foundation
import ModelDepotShared

extension DeviceContext {
    /// What the SDK knows by itself: the platform (`ios`, `macos`, `linux`, …), the operating
    /// system's version, the app's version (`CFBundleShortVersionString`) and the SDK's.
    static func automatic(bundle: Bundle = .main, process: ProcessInfo = .processInfo) -> DeviceContext {
        let os = process.operatingSystemVersion
        return DeviceContext(
            platform: currentPlatform, appVersion: bundle.infoDictionary?["CFBundleShortVersionString"] as? String,
            osVersion: "\(os.majorVersion).\(os.minorVersion).\(os.patchVersion)", sdkVersion: modelDepotSDKVersion)
    }

    /// The platform as rollout conditions name it; iPadOS and Mac Catalyst apps are `ios` apps.
    static var currentPlatform: String {
        #if os(iOS)
            "ios"
        #elseif os(macOS)
            "macos"
        #elseif os(tvOS)
            "tvos"
        #elseif os(watchOS)
            "watchos"
        #elseif os(visionOS)
            "visionos"
        #elseif os(Android)
            "android"
        #elseif os(Windows)
            "windows"
        #else
            "linux"
        #endif
    }

    /// This context, with each field it leaves unset taken from `defaults` (attributes merged,
    /// this context's winning).
    func filling(from defaults: DeviceContext) -> DeviceContext {
        DeviceContext(
            installationID: installationID ?? defaults.installationID, platform: platform ?? defaults.platform,
            appVersion: appVersion ?? defaults.appVersion, osVersion: osVersion ?? defaults.osVersion,
            sdkVersion: sdkVersion ?? defaults.sdkVersion, country: country ?? defaults.country,
            attributes: defaults.attributes.merging(attributes) { $1 })
    }
}
