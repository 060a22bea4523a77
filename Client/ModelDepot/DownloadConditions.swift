import Foundation

/// When a model may be downloaded, as ML Kit's `ModelDownloadConditions` states it, plus what
/// ML Kit lacks: Low Data Mode, Low Power Mode, heat, free space and a bounded wait.
///
/// The conditions are checked before a download starts and again before each range of it; the
/// network ones also travel with every request (``NetworkAccess``), so on Apple platforms the
/// system stops a transfer that moves onto a network it may not use. Either way the bytes
/// downloaded so far stay in the partial file, and the download goes on from there once the
/// conditions hold again (within ``waitsUpTo``, or at the next call).
///
/// ```swift
/// var conditions = DownloadConditions()
/// conditions.allowsCellularAccess = false
/// conditions.allowsConstrainedNetworkAccess = false
/// conditions.waitsUpTo = .seconds(600)
/// let model = try await downloader.model(named: "flowers", conditions: conditions)
/// ```
public struct DownloadConditions: Sendable, Hashable {
    /// Download over cellular.
    public var allowsCellularAccess = true
    /// Download over networks that cost the user money: cellular, personal hotspots.
    public var allowsExpensiveNetworkAccess = true
    /// Download while the user has Low Data Mode on.
    public var allowsConstrainedNetworkAccess = true
    /// Download while the app is in the background.
    public var allowsBackgroundDownloading = false
    /// Only while the device charges.
    public var requiresCharging = false
    /// Only while the device is idle (on Apple platforms: locked).
    public var requiresDeviceIdle = false
    /// Wait while Low Power Mode is on.
    public var pausesInLowPowerMode = false
    /// Wait while the device runs this hot or hotter; `nil` never waits for heat. By default a
    /// download waits while the device is `critical`, when the system asks apps to do as little as
    /// they can.
    public var pausesAtThermalState: ThermalState? = .critical
    /// Bytes that must stay free after the download.
    public var minimumFreeSpace: Int64 = 0
    /// How long to wait for unmet conditions before failing; `nil` fails at once.
    public var waitsUpTo: Duration?
    /// How often to look again while waiting.
    public var pollInterval: Duration = .seconds(5)

    /// Creates conditions; the defaults allow any download but on a critically hot device.
    public init() {}

    /// Only on an unmetered network: the same as `allowsExpensiveNetworkAccess = false`.
    @available(*, deprecated, renamed: "allowsExpensiveNetworkAccess", message: "Set allowsExpensiveNetworkAccess = false instead.")
    public var requiresUnmeteredNetwork: Bool {
        get { !allowsExpensiveNetworkAccess }
        set { allowsExpensiveNetworkAccess = !newValue }
    }

    /// The networks a transfer under these conditions may use.
    public var networkAccess: NetworkAccess {
        NetworkAccess(
            allowsCellular: allowsCellularAccess, allowsExpensive: allowsExpensiveNetworkAccess,
            allowsConstrained: allowsConstrainedNetworkAccess)
    }
}

extension DownloadConditions {
    /// The conditions the status does not meet, in words; empty when all hold.
    func unmet(by status: DeviceStatus) -> [String] {
        var reasons: [String] = []
        if !allowsCellularAccess, status.isOnCellular { reasons.append("the device is on cellular and cellular downloads are not allowed") }
        if !allowsExpensiveNetworkAccess, status.isNetworkMetered {
            reasons.append("the network is expensive (cellular or a personal hotspot) and expensive networks are not allowed")
        }
        if !allowsConstrainedNetworkAccess, status.isNetworkConstrained {
            reasons.append("Low Data Mode is on and constrained networks are not allowed")
        }
        if requiresCharging, !status.isCharging { reasons.append("the device is not charging") }
        if requiresDeviceIdle, !status.isIdle { reasons.append("the device is not idle") }
        if pausesInLowPowerMode, status.isLowPowerModeEnabled { reasons.append("Low Power Mode is on") }
        if let limit = pausesAtThermalState, status.thermalState >= limit {
            reasons.append("the device's thermal state is \(status.thermalState)")
        }
        if !allowsBackgroundDownloading, status.isInBackground { reasons.append("the app is in the background") }
        return reasons
    }
}
