import Foundation
import ModelDepotShared
import Testing

@testable import ModelDepot

/// What manifest checks say of the device when the app says nothing: the platform, the OS and
/// the SDK; what the app sets wins.
@Suite struct DeviceContextTests {
    @Test func theSDKFillsInThePlatformTheOSAndItsOwnVersion() {
        let automatic = DeviceContext.automatic()
        #if os(Linux)
            #expect(automatic.platform == "linux")
        #endif
        let os = ProcessInfo.processInfo.operatingSystemVersion
        #expect(automatic.osVersion == "\(os.majorVersion).\(os.minorVersion).\(os.patchVersion)")
        #expect(automatic.sdkVersion == modelDepotSDKVersion)
        #expect(
            modelDepotSDKVersion.split(separator: ".").count == 3
                && modelDepotSDKVersion.split(separator: ".").allSatisfy { Int($0) != nil })
    }

    @Test func whatTheAppSetsWinsAndAttributesMerge() {
        let app = DeviceContext(platform: "ios", appVersion: "3.1.0", attributes: ["tier": "gold", "beta": "1"])
        let defaults = DeviceContext(
            platform: "linux", appVersion: nil, osVersion: "6.1.0", sdkVersion: "1.0.0", attributes: ["tier": "none", "region": "eu"])
        let filled = app.filling(from: defaults)
        #expect(
            filled
                == DeviceContext(
                    platform: "ios", appVersion: "3.1.0", osVersion: "6.1.0", sdkVersion: "1.0.0",
                    attributes: ["tier": "gold", "beta": "1", "region": "eu"]))
    }
}
