import Foundation
import ModelDepotShared

/// A ``DeviceStatusProvider`` that answers from the reports it was given (``DeviceObservations``)
/// and the volume's free space: what `AppleDeviceStatus` forwards the system's notifications to.
final class ObservedDeviceStatus: DeviceStatusProvider {
    private let observations = Locked(DeviceObservations())

    func apply(_ report: DeviceObservations.Report) {
        observations.withLock { $0.apply(report) }
    }

    func status(for directory: URL) -> DeviceStatus {
        observations.withLock { $0 }.status(freeSpace: SystemDeviceStatus.freeSpace(at: directory))
    }
}
