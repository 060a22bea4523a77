import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ModelDepotShared

/// When a model may be downloaded, as ML Kit's `ModelDownloadConditions` states it, plus what
/// ML Kit lacks: free space and a bounded wait.
public struct DownloadConditions: Sendable, Hashable {
    /// Download over cellular.
    public var allowsCellularAccess = true
    /// Download while the app is in the background (Apple platforms).
    public var allowsBackgroundDownloading = false
    /// Only while the device charges.
    public var requiresCharging = false
    /// Only while the device is idle.
    public var requiresDeviceIdle = false
    /// Only on an unmetered network.
    public var requiresUnmeteredNetwork = false
    /// Bytes that must stay free after the download.
    public var minimumFreeSpace: Int64 = 0
    /// How long to wait for unmet conditions before failing; `nil` fails at once.
    public var waitsUpTo: Duration?
    /// How often to look again while waiting.
    public var pollInterval: Duration = .seconds(5)

    /// Creates conditions; the defaults allow any download.
    public init() {}
}

/// What the device is doing now, for download conditions.
public struct DeviceStatus: Sendable, Hashable {
    public var isOnCellular: Bool
    public var isNetworkMetered: Bool
    public var isCharging: Bool
    public var isIdle: Bool
    public var isInBackground: Bool
    /// Free bytes on the volume of the cache directory.
    public var freeSpace: Int64

    public init(isOnCellular: Bool = false, isNetworkMetered: Bool = false, isCharging: Bool = true, isIdle: Bool = true,
                isInBackground: Bool = false, freeSpace: Int64) {
        self.isOnCellular = isOnCellular
        self.isNetworkMetered = isNetworkMetered
        self.isCharging = isCharging
        self.isIdle = isIdle
        self.isInBackground = isInBackground
        self.freeSpace = freeSpace
    }
}

/// Tells the SDK what the device is doing; injected so apps (and tests) can supply it.
public protocol DeviceStatusProvider: Sendable {
    /// The current status, with free space on the volume holding `directory`.
    func status(for directory: URL) -> DeviceStatus
}

/// The default outside Apple platforms: an unmetered, powered, idle, foreground device, with the
/// volume's real free space.
public struct SystemDeviceStatus: DeviceStatusProvider {
    public init() {}

    public func status(for directory: URL) -> DeviceStatus {
        var stats = statvfs()
        let free = statvfs(directory.path, &stats) == 0 ? Int64(stats.f_bavail) * Int64(stats.f_frsize) : Int64.max
        return DeviceStatus(freeSpace: free)
    }
}

extension DownloadConditions {
    /// The conditions the status does not meet, in words; empty when all hold.
    func unmet(by status: DeviceStatus) -> [String] {
        var reasons: [String] = []
        if !allowsCellularAccess, status.isOnCellular { reasons.append("the device is on cellular and cellular downloads are not allowed") }
        if requiresUnmeteredNetwork, status.isNetworkMetered { reasons.append("the network is metered and an unmetered one is required") }
        if requiresCharging, !status.isCharging { reasons.append("the device is not charging") }
        if requiresDeviceIdle, !status.isIdle { reasons.append("the device is not idle") }
        if !allowsBackgroundDownloading, status.isInBackground { reasons.append("the app is in the background") }
        return reasons
    }
}
