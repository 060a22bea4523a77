import Foundation
import Testing

@testable import ModelDepot

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Which conditions a device's status breaks, and which networks a transfer under them may use.
@Suite struct DownloadConditionsTests {
    let calm = DeviceStatus(freeSpace: 1 << 30)

    @Test func defaultConditionsHoldOnAnyDeviceButACriticallyHotOne() {
        let busy = DeviceStatus(
            isOnCellular: true, isNetworkMetered: true, isNetworkConstrained: true, isCharging: false,
            isLowPowerModeEnabled: true, isIdle: false, thermalState: .serious, freeSpace: 0)
        #expect(DownloadConditions().unmet(by: busy).isEmpty)
        var hot = calm
        hot.thermalState = .critical
        #expect(DownloadConditions().unmet(by: hot) == ["the device's thermal state is critical"])
    }

    @Test func eachNetworkConditionNamesWhatItRefuses() {
        var conditions = DownloadConditions()
        conditions.allowsExpensiveNetworkAccess = false
        conditions.allowsConstrainedNetworkAccess = false
        var status = calm
        #expect(conditions.unmet(by: status).isEmpty)
        status.isNetworkMetered = true
        status.isNetworkConstrained = true
        #expect(
            conditions.unmet(by: status) == [
                "the network is expensive (cellular or a personal hotspot) and expensive networks are not allowed",
                "Low Data Mode is on and constrained networks are not allowed",
            ])
    }

    @Test func lowPowerModePausesOnlyWhenAsked() {
        var status = calm
        status.isLowPowerModeEnabled = true
        var conditions = DownloadConditions()
        #expect(conditions.unmet(by: status).isEmpty)
        conditions.pausesInLowPowerMode = true
        #expect(conditions.unmet(by: status) == ["Low Power Mode is on"])
    }

    @Test func requiringAnUnmeteredNetworkIsRefusingExpensiveOnes() {
        var conditions = DownloadConditions()
        conditions.allowsExpensiveNetworkAccess = false
        #expect(conditions.networkAccess == NetworkAccess(allowsCellular: true, allowsExpensive: false, allowsConstrained: true))
        #expect(DownloadConditions().networkAccess == .any)
    }

    @Test func aRequestCarriesTheCellularFlagOnEveryPlatform() throws {
        let request = URLRequest(url: try #require(URL(string: "http://127.0.0.1/v1/blobs/sha256/00")))
        #expect(request.allowing(NetworkAccess(allowsCellular: false)).allowsCellularAccess == false)
        #expect(request.allowing(.any).allowsCellularAccess == true)
    }

    @Test func thermalStatesAreOrderedFromCoolToHot() {
        #expect(ThermalState.nominal < .fair && ThermalState.fair < .serious && ThermalState.serious < .critical)
        #expect(ThermalState.serious.description == "serious")
    }
}
