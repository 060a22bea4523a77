import Foundation
import Testing

@testable import ModelDepot

/// The privacy manifest an app's archive picks up from the SDK: the required-reason APIs the SDK
/// calls and the data its outcome upload collects, readable as Apple's tools read it.
@Suite struct PrivacyManifestTests {
    func manifest() throws -> [String: Any] {
        let url = try #require(Bundle.module.url(forResource: "PrivacyInfo", withExtension: "xcprivacy"))
        let plist = try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil)
        return try #require(plist as? [String: Any])
    }

    @Test func itDeclaresTheRequiredReasonAPIsTheSDKCalls() throws {
        let manifest = try manifest()
        let types = try #require(manifest["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        var reasons: [String: [String]] = [:]
        for entry in types {
            reasons[try #require(entry["NSPrivacyAccessedAPIType"] as? String)] = entry["NSPrivacyAccessedAPITypeReasons"] as? [String]
        }
        // fstat and file sizes (the partial file, the cache), statvfs and volume capacity, monotonic clocks (transfer pace, latency).
        #expect(reasons["NSPrivacyAccessedAPICategoryFileTimestamp"] == ["C617.1"])
        #expect(reasons["NSPrivacyAccessedAPICategoryDiskSpace"] == ["E174.1"])
        #expect(reasons["NSPrivacyAccessedAPICategorySystemBootTime"] == ["35F9.1"])
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
    }

    @Test func itDeclaresTheDataOutcomeUploadsCollectAsNotLinkedAndNotTracking() throws {
        let collected = try #require(try manifest()["NSPrivacyCollectedDataTypes"] as? [[String: Any]])
        let kinds = collected.compactMap { $0["NSPrivacyCollectedDataType"] as? String }
        #expect(
            Set(kinds) == [
                "NSPrivacyCollectedDataTypeDeviceID", "NSPrivacyCollectedDataTypePerformanceData",
                "NSPrivacyCollectedDataTypeProductInteraction",
            ])
        #expect(
            collected.allSatisfy {
                $0["NSPrivacyCollectedDataTypeLinked"] as? Bool == false && $0["NSPrivacyCollectedDataTypeTracking"] as? Bool == false
            })
    }
}
