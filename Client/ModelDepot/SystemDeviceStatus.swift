import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The default outside Apple platforms: an unmetered, powered, idle, foreground device, with the
/// volume's real free space.
public struct SystemDeviceStatus: DeviceStatusProvider {
    /// Creates the provider.
    public init() {}

    public func status(for directory: URL) -> DeviceStatus {
        DeviceStatus(freeSpace: Self.freeSpace(at: directory))
    }

    /// Bytes free for the app's important data on the volume holding `directory`: on Apple
    /// platforms `volumeAvailableCapacityForImportantUsage`, which counts space the system would
    /// purge for it; elsewhere `statvfs`'s blocks available to the user. `Int64.max` when the
    /// volume cannot be asked, so that an unknown answer never blocks a download by itself.
    static func freeSpace(at directory: URL) -> Int64 {
        #if canImport(Darwin)
            if let capacity = try? directory.resourceValues(forKeys: [.volumeAvailableCapacityForImportantUsageKey])
                .volumeAvailableCapacityForImportantUsage
            {
                return capacity
            }
        #endif
        var stats = statvfs()
        guard statvfs(directory.path, &stats) == 0 else { return .max }
        // Darwin's f_bavail is 32 bits and f_frsize a UInt: widen both before multiplying.
        let (bytes, overflow) = Int64(clamping: UInt64(stats.f_bavail)).multipliedReportingOverflow(
            by: Int64(clamping: UInt64(stats.f_frsize)))
        return overflow ? .max : bytes
    }
}
