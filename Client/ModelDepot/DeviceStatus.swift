import Foundation

/// What the device is doing now, for download conditions: the network, power, the app's state,
/// heat and free space.
///
/// On Apple platforms `AppleDeviceStatus` fills it from `NWPathMonitor` and the system's
/// notifications; elsewhere ``SystemDeviceStatus`` reports a powered, idle, foreground device on
/// an unmetered network. An app may supply its own ``DeviceStatusProvider``.
public struct DeviceStatus: Sendable, Hashable {
    /// The network path uses a cellular interface.
    public var isOnCellular: Bool
    /// The network costs the user money: cellular or a personal hotspot (`NWPath.isExpensive`).
    public var isNetworkMetered: Bool
    /// The user asked to save data: Low Data Mode (`NWPath.isConstrained`).
    public var isNetworkConstrained: Bool
    /// The device is plugged in (charging or full).
    public var isCharging: Bool
    /// Low Power Mode is on.
    public var isLowPowerModeEnabled: Bool
    /// Nobody is using the device: on Apple platforms, it is locked.
    public var isIdle: Bool
    /// The app is not in the foreground.
    public var isInBackground: Bool
    /// How hot the device runs.
    public var thermalState: ThermalState
    /// How many times the app has come back to the foreground since the provider started. A
    /// transfer that went silent while this changed was suspended with the app rather than
    /// stalled by the network, and is tried again.
    public var activations: Int
    /// Bytes free for the app's important data on the volume of the cache directory.
    public var freeSpace: Int64

    /// Creates a status; the defaults describe a powered, idle, cool foreground device on an
    /// unmetered network.
    public init(
        isOnCellular: Bool = false, isNetworkMetered: Bool = false, isNetworkConstrained: Bool = false, isCharging: Bool = true,
        isLowPowerModeEnabled: Bool = false, isIdle: Bool = true, isInBackground: Bool = false, thermalState: ThermalState = .nominal,
        activations: Int = 0, freeSpace: Int64
    ) {
        self.isOnCellular = isOnCellular
        self.isNetworkMetered = isNetworkMetered
        self.isNetworkConstrained = isNetworkConstrained
        self.isCharging = isCharging
        self.isLowPowerModeEnabled = isLowPowerModeEnabled
        self.isIdle = isIdle
        self.isInBackground = isInBackground
        self.thermalState = thermalState
        self.activations = activations
        self.freeSpace = freeSpace
    }
}

/// How hot the device runs, as `ProcessInfo.ThermalState` grades it; ordered from cool to hot.
/// A struct rather than an enum, so that a grade added later does not break an app's `switch`.
public struct ThermalState: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The grade, 0 (nominal) to 3 (critical).
    public let level: Int

    /// Within normal limits.
    public static let nominal = ThermalState(level: 0)
    /// Slightly raised.
    public static let fair = ThermalState(level: 1)
    /// High: the system reduces work.
    public static let serious = ThermalState(level: 2)
    /// Significantly affecting performance: the app should do as little as it can.
    public static let critical = ThermalState(level: 3)

    public static func < (lhs: ThermalState, rhs: ThermalState) -> Bool { lhs.level < rhs.level }

    public var description: String {
        switch level {
        case 0: "nominal"
        case 1: "fair"
        case 2: "serious"
        case 3: "critical"
        default: "level \(level)"
        }
    }
}

/// Tells the SDK what the device is doing; injected so apps (and tests) can supply it.
public protocol DeviceStatusProvider: Sendable {
    /// The current status, with free space on the volume holding `directory`. Called often (before
    /// each range of a download): it answers from what it has cached, never by polling the system.
    func status(for directory: URL) -> DeviceStatus
}

/// The status provider a configuration uses unless told otherwise: `AppleDeviceStatus.shared`
/// where the Network framework exists, ``SystemDeviceStatus`` elsewhere.
public func defaultDeviceStatus() -> any DeviceStatusProvider {
    #if canImport(Network)
        AppleDeviceStatus.shared
    #else
        SystemDeviceStatus()
    #endif
}
