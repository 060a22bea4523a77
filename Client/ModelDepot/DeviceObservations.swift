/// What a status provider has heard from the system, changed one report at a time. Every
/// decision about what a report means lives here, tested on every platform; `AppleDeviceStatus`
/// only forwards the system's reports.
struct DeviceObservations: Sendable, Hashable {
    /// The battery as `UIDevice.BatteryState` reports it.
    enum Battery: Sendable, Hashable {
        case unknown, unplugged, charging, full
    }

    /// The parts of an `NWPath` that conditions read.
    struct NetworkPath: Sendable, Hashable {
        var usesCellular = false
        var isExpensive = false
        var isConstrained = false
    }

    /// One thing the system said.
    enum Report: Sendable, Hashable {
        case path(NetworkPath)
        case battery(Battery)
        case lowPowerMode(Bool)
        case enteredBackground
        case enteredForeground
        case protectedData(available: Bool)
        case thermal(ThermalState)
    }

    var path = NetworkPath()
    var battery = Battery.unknown
    var isLowPowerModeEnabled = false
    var isInBackground = false
    var isLocked = false
    var thermalState = ThermalState.nominal
    var activations = 0

    mutating func apply(_ report: Report) {
        switch report {
        case .path(let path): self.path = path
        case .battery(let battery): self.battery = battery
        case .lowPowerMode(let enabled): isLowPowerModeEnabled = enabled
        case .enteredBackground: isInBackground = true
        case .enteredForeground:
            // Only a return from the background is an activation: the system may repeat the
            // notification, and a repeat must not turn a real stall into a retry.
            if isInBackground { activations += 1 }
            isInBackground = false
        case .protectedData(let available): isLocked = !available
        case .thermal(let state): thermalState = state
        }
    }

    /// The status these observations describe. A battery the system cannot read (the Simulator,
    /// a Mac without one) counts as charging, so that `requiresCharging` does not wait forever
    /// where it can never be met; a locked device is idle.
    func status(freeSpace: Int64) -> DeviceStatus {
        DeviceStatus(
            isOnCellular: path.usesCellular, isNetworkMetered: path.isExpensive, isNetworkConstrained: path.isConstrained,
            isCharging: battery != .unplugged, isLowPowerModeEnabled: isLowPowerModeEnabled, isIdle: isLocked,
            isInBackground: isInBackground, thermalState: thermalState, activations: activations, freeSpace: freeSpace)
    }
}
