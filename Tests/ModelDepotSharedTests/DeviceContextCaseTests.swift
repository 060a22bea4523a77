import ModelDepotShared
import Testing

/// The fields a device context normalises: the installation id and platform lower-cased, the
/// country upper-cased, whatever case they come in; the other fields as sent.
@Suite struct DeviceContextCaseTests {
    @Test func caseInsensitiveFieldsAreNormalisedAndTheRestKept() {
        let mixed = DeviceContext(
            installationID: "3F6C2A9E-5B1D-4c8e", platform: "iOS", appVersion: "3.2.0-RC1", osVersion: "18.1", country: "de")
        #expect(mixed.installationID == "3f6c2a9e-5b1d-4c8e")
        #expect(mixed.platform == "ios")
        #expect(mixed.country == "DE")
        #expect(mixed.appVersion == "3.2.0-RC1", "not a case-insensitive field")
        let plain = DeviceContext(installationID: "3f6c2a9e-5b1d", platform: "android", country: "US")
        #expect(plain.installationID == "3f6c2a9e-5b1d" && plain.platform == "android" && plain.country == "US")
        let unicode = DeviceContext(installationID: "ÉCOLE-1", platform: "Ωs", country: "ça")
        #expect(unicode.installationID == "école-1")
        #expect(unicode.platform == "ωs")
        #expect(unicode.country == "ÇA")
    }
}
