import Foundation

/// An effect over time drawn as SVG on the server: for each hour, every version's sequential
/// interval as a vertical bar with its estimate as a dot, against a line at no change; coloured by
/// the stylesheet's `series-N` classes (no inline style, so the CSP holds).
struct ConsoleIntervalChart {
    struct Series {
        let label: String
        /// Hours, estimates and intervals in the metric's judged difference (fractions).
        let points: [(hour: Date, estimate: Double, lower: Double, upper: Double)]
    }

    let id: String
    let title: String
    /// `points` (percentage points) or `%`.
    let unit: String
    let series: [Series]

    private static let width = 360.0, height = 180.0
    private static let left = 48.0, right = 10.0, top = 10.0, bottom = 28.0

    /// The `<svg>` element.
    var svg: String {
        let hours = Array(Set(series.flatMap { $0.points.map(\.hour) })).sorted()
        let column = Dictionary(uniqueKeysWithValues: hours.enumerated().map { ($0.element, $0.offset) })
        let values = series.flatMap { $0.points.flatMap { [$0.lower, $0.upper, $0.estimate] } }.filter(\.isFinite)
        // The scale always shows no change, and at least ±1 (point or %) around it.
        let high = Self.rounded(max(values.max() ?? 0, 0.01)), low = -Self.rounded(max(-(values.min() ?? 0), 0.01))
        let plotWidth = Self.width - Self.left - Self.right, plotHeight = Self.height - Self.top - Self.bottom
        let slot = plotWidth / Double(max(hours.count, 1))
        let x = { (index: Int, line: Int) in
            Self.left + slot * (Double(index) + 0.5) + (Double(line) - Double(series.count - 1) / 2)
                * min(6, slot / Double(series.count + 1))
        }
        let y = { (value: Double) in Self.top + plotHeight * (high - min(max(value, low), high)) / (high - low) }
        let latest = series.compactMap { line in
            line.points.last.map {
                "\(line.label): \(Self.shown($0.estimate)) \(unit) (\(Self.shown($0.lower)) to \(Self.shown($0.upper)))"
            }
        }
        let description = latest.isEmpty ? "No hours with data yet." : "Latest: \(latest.joined(separator: "; "))."
        var svg =
            "<svg class=\"chart interval-chart\" viewBox=\"0 0 \(Int(Self.width)) \(Int(Self.height))\" role=\"img\" "
            + "aria-labelledby=\"\(id)-title \(id)-desc\"><title id=\"\(id)-title\">\(ConsoleChart.escaped(title))</title>"
            + "<desc id=\"\(id)-desc\">\(ConsoleChart.escaped(description))</desc>"
        for value in [high, 0, low] {
            let line = Self.format(y(value))
            svg +=
                "<line class=\"\(value == 0 ? "axis" : "grid")\" x1=\"\(Int(Self.left))\" x2=\"\(Int(Self.width - Self.right))\" y1=\"\(line)\" y2=\"\(line)\"/>"
            svg += "<text x=\"\(Int(Self.left) - 4)\" y=\"\(Self.format(y(value) + 4))\" text-anchor=\"end\">\(Self.shown(value))</text>"
        }
        for index in Set([0, hours.count - 1]).sorted() where hours.indices.contains(index) {
            let anchor = hours.count == 1 ? "middle" : index == 0 ? "start" : "end"
            let at = hours.count == 1 ? Self.left + plotWidth / 2 : index == 0 ? Self.left : Self.width - Self.right
            svg +=
                "<text x=\"\(Self.format(at))\" y=\"\(Int(Self.height) - 8)\" text-anchor=\"\(anchor)\">\(Self.label(hours[index]))</text>"
        }
        for (number, line) in series.enumerated() {
            svg += "<g class=\"series-\(number % 8)\"><title>\(ConsoleChart.escaped(line.label))</title>"
            for point in line.points {
                guard let index = column[point.hour], point.lower.isFinite, point.upper.isFinite, point.estimate.isFinite else { continue }
                let at = Self.format(x(index, number))
                svg +=
                    "<line class=\"interval\" x1=\"\(at)\" x2=\"\(at)\" y1=\"\(Self.format(y(point.lower)))\" y2=\"\(Self.format(y(point.upper)))\"/>"
                svg += "<circle class=\"estimate\" cx=\"\(at)\" cy=\"\(Self.format(y(point.estimate)))\" r=\"2.5\"/>"
            }
            svg += "</g>"
        }
        return svg + "</svg>"
    }

    /// The smallest of 1, 2, 5 × 10ⁿ hundredths at or above `value` (a fraction), as a fraction.
    private static func rounded(_ value: Double) -> Double {
        guard value.isFinite else { return 1 }
        return Double(ConsoleChart.roundedUp(Int(min((value * 100).rounded(.up), 1e9)))) / 100
    }

    private static func shown(_ fraction: Double) -> String {
        let hundredths = (fraction * 100 * 10).rounded() / 10
        return (hundredths > 0 ? "+" : "")
            + (hundredths == hundredths.rounded() ? String(format: "%.0f", hundredths) : String(format: "%.1f", hundredths))
    }

    private static func label(_ hour: Date) -> String {
        let parts = ConsoleChart.utc.dateComponents([.month, .day, .hour], from: hour)
        return String(format: "%02d-%02d %02d:00", parts.month ?? 0, parts.day ?? 0, parts.hour ?? 0)
    }

    private static func format(_ value: Double) -> String { String(format: "%.1f", value) }
}
