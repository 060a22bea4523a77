#if canImport(Network)
    import Foundation
    import Network
    #if canImport(UIKit)
        import UIKit
    #endif

    /// The default ``DeviceStatusProvider`` on Apple platforms: the network path from
    /// `NWPathMonitor`, Low Power Mode and the thermal state from `ProcessInfo`, and on iOS the
    /// battery, the app's state and the lock from UIKit's notifications. Everything is cached as the
    /// system reports it and never polled; what each report means is decided in platform-neutral code.
    public final class AppleDeviceStatus: DeviceStatusProvider, @unchecked Sendable {
        // @unchecked: `monitor` is set up in init and never touched again; the state it reports to is
        // behind `ObservedDeviceStatus`'s lock.
        /// The one provider of the process: its monitor and observers live as long as the app.
        public static let shared = AppleDeviceStatus()

        private let observed = ObservedDeviceStatus()
        private let monitor = NWPathMonitor()

        private init() {
            let observed = observed
            monitor.pathUpdateHandler = { path in
                observed.apply(
                    .path(
                        .init(
                            usesCellular: path.usesInterfaceType(.cellular), isExpensive: path.isExpensive,
                            isConstrained: path.isConstrained)))
            }
            monitor.start(queue: DispatchQueue(label: "ModelDepot.AppleDeviceStatus"))
            let center = NotificationCenter.default
            let process = ProcessInfo.processInfo
            observed.apply(.lowPowerMode(process.isLowPowerModeEnabled))
            observed.apply(.thermal(Self.thermal(process.thermalState)))
            _ = center.addObserver(forName: .NSProcessInfoPowerStateDidChange, object: nil, queue: nil) { _ in
                observed.apply(.lowPowerMode(ProcessInfo.processInfo.isLowPowerModeEnabled))
            }
            _ = center.addObserver(forName: ProcessInfo.thermalStateDidChangeNotification, object: nil, queue: nil) { _ in
                observed.apply(.thermal(Self.thermal(ProcessInfo.processInfo.thermalState)))
            }
            #if canImport(UIKit) && !os(watchOS)
                // UIKit's names and state belong to the main actor: read and subscribed there.
                Task { @MainActor in
                    let forward: [(Notification.Name, DeviceObservations.Report)] = [
                        (UIApplication.didEnterBackgroundNotification, .enteredBackground),
                        (UIApplication.willEnterForegroundNotification, .enteredForeground),
                        (UIApplication.protectedDataWillBecomeUnavailableNotification, .protectedData(available: false)),
                        (UIApplication.protectedDataDidBecomeAvailableNotification, .protectedData(available: true)),
                    ]
                    for (name, report) in forward {
                        _ = center.addObserver(forName: name, object: nil, queue: nil) { _ in observed.apply(report) }
                    }
                    _ = center.addObserver(forName: UIDevice.batteryStateDidChangeNotification, object: nil, queue: .main) { _ in
                        MainActor.assumeIsolated { observed.apply(.battery(Self.battery(UIDevice.current.batteryState))) }
                    }
                    UIDevice.current.isBatteryMonitoringEnabled = true
                    observed.apply(.battery(Self.battery(UIDevice.current.batteryState)))
                    if UIApplication.shared.applicationState == .background { observed.apply(.enteredBackground) }
                    observed.apply(.protectedData(available: UIApplication.shared.isProtectedDataAvailable))
                }
            #endif
        }

        public func status(for directory: URL) -> DeviceStatus { observed.status(for: directory) }

        private static func thermal(_ state: ProcessInfo.ThermalState) -> ThermalState {
            switch state {
            case .nominal: .nominal
            case .fair: .fair
            case .serious: .serious
            case .critical: .critical
            @unknown default: .critical
            }
        }

        #if canImport(UIKit) && !os(watchOS)
            private static func battery(_ state: UIDevice.BatteryState) -> DeviceObservations.Battery {
                switch state {
                case .unplugged: .unplugged
                case .charging: .charging
                case .full: .full
                case .unknown: .unknown
                @unknown default: .unknown
                }
            }
        #endif
    }
#endif
