import Foundation
import Synchronization

/// An upload progress bar (bytes, rate, ETA) on standard error, drawn only on a terminal.
final class ProgressBar: Sendable {
    private struct State {
        var lastDraw = ContinuousClock.now
    }

    private let start = ContinuousClock.now
    private let state = Mutex(State())
    let isEnabled = isatty(STDERR_FILENO) == 1

    func update(sent: Int64, total: Int64) {
        guard isEnabled else { return }
        let now = ContinuousClock.now
        let draw = state.withLock { state -> Bool in
            guard sent == total || now - state.lastDraw > .milliseconds(100) else { return false }
            state.lastDraw = now
            return true
        }
        guard draw, total > 0 else { return }
        let elapsed = max((now - start) / .seconds(1), 0.001)
        let rate = Double(sent) / elapsed
        let fraction = Double(sent) / Double(total)
        let filled = Int(fraction * 30)
        let eta = rate > 0 ? Double(total - sent) / rate : 0
        let line = String(
            format: "\r[%@%@] %3.0f%% %@ / %@  %@/s  ETA %.0fs ",
            String(repeating: "=", count: filled), String(repeating: " ", count: 30 - filled),
            fraction * 100, Self.bytes(Double(sent)), Self.bytes(Double(total)), Self.bytes(rate), eta)
        FileHandle.standardError.write(Data(line.utf8))
    }

    func finish() {
        if isEnabled { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    static func bytes(_ value: Double) -> String {
        let units = ["B", "KB", "MB", "GB"]
        var value = value
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return String(format: unit == 0 ? "%.0f %@" : "%.1f %@", value, units[unit])
    }
}
