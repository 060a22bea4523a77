import Testing

@testable import ModelDepot

/// What the system's reports mean for download conditions: the decisions ``AppleDeviceStatus``
/// leaves to platform-neutral code.
@Suite struct DeviceObservationsTests {
    func status(after reports: [DeviceObservations.Report]) -> DeviceStatus {
        var observations = DeviceObservations()
        for report in reports { observations.apply(report) }
        return observations.status(freeSpace: 1_000)
    }

    @Test func theNetworkPathSaysCellularExpensiveAndConstrained() {
        let cellular = status(after: [.path(.init(usesCellular: true, isExpensive: true, isConstrained: false))])
        #expect(cellular.isOnCellular && cellular.isNetworkMetered && !cellular.isNetworkConstrained)
        let lowData = status(after: [
            .path(.init(usesCellular: true, isExpensive: true, isConstrained: true)),
            .path(.init(usesCellular: false, isExpensive: false, isConstrained: true)),
        ])
        #expect(!lowData.isOnCellular && !lowData.isNetworkMetered && lowData.isNetworkConstrained, "the newest path counts")
    }

    @Test func aBatteryCountsAsChargingWhenPluggedInOrUnreadable() {
        #expect(status(after: [.battery(.charging)]).isCharging)
        #expect(status(after: [.battery(.full)]).isCharging)
        #expect(status(after: [.battery(.unknown)]).isCharging, "the Simulator and Macs without a battery report unknown")
        #expect(!status(after: [.battery(.charging), .battery(.unplugged)]).isCharging)
    }

    @Test func lowPowerModeAndHeatFollowTheirLastReport() {
        #expect(status(after: [.lowPowerMode(true)]).isLowPowerModeEnabled)
        #expect(!status(after: [.lowPowerMode(true), .lowPowerMode(false)]).isLowPowerModeEnabled)
        #expect(status(after: [.thermal(.serious), .thermal(.critical)]).thermalState == .critical)
    }

    @Test func onlyAReturnFromTheBackgroundIsAnActivation() {
        let resumed = status(after: [.enteredBackground, .enteredForeground])
        #expect(!resumed.isInBackground && resumed.activations == 1)
        #expect(status(after: [.enteredForeground, .enteredForeground]).activations == 0, "a repeated notification is no suspension")
        let twice = status(after: [.enteredBackground, .enteredForeground, .enteredForeground, .enteredBackground, .enteredForeground])
        #expect(twice.activations == 2)
        #expect(status(after: [.enteredBackground]).isInBackground)
    }

    @Test func aLockedDeviceIsIdle() {
        #expect(!status(after: []).isIdle)
        #expect(status(after: [.protectedData(available: false)]).isIdle)
        #expect(!status(after: [.protectedData(available: false), .protectedData(available: true)]).isIdle)
    }
}
