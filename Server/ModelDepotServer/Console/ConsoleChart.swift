import Foundation

/// A line chart drawn as SVG on the server: one line per series over evenly spaced time windows,
/// coloured by the stylesheet's `series-N` classes (no inline style, so the CSP holds).
struct ConsoleChart {
    struct Series {
        let label: String
        let values: [Int]
    }

    let id: String
    let title: String
    let starts: [Date]
    let windowSeconds: Int
    let series: [Series]

    private static let width = 720.0, height = 260.0
    private static let left = 52.0, right = 16.0, top = 16.0, bottom = 40.0

    /// The `<svg>` element.
    var svg: String {
        let plotWidth = Self.width - Self.left - Self.right
        let plotHeight = Self.height - Self.top - Self.bottom
        let maximum = Self.roundedUp(series.flatMap(\.values).max() ?? 0)
        let x = { (index: Int) in Self.left + (starts.count > 1 ? plotWidth * Double(index) / Double(starts.count - 1) : plotWidth / 2) }
        let y = { (value: Int) in Self.top + plotHeight * (1 - Double(value) / Double(maximum)) }
        let totals = series.map { "\($0.label): \($0.values.reduce(0, +))" }.joined(separator: ", ")
        var svg = """
            <svg class="chart" viewBox="0 0 \(Int(Self.width)) \(Int(Self.height))" role="img" aria-labelledby="\(id)-title \(id)-desc">\
            <title id="\(id)-title">\(Self.escaped(title))</title>\
            <desc id="\(id)-desc">\(Self.escaped(series.isEmpty ? "No traffic in this period." : "Totals: \(totals)."))</desc>
            """
        for step in 0...2 {
            let value = maximum * step / 2
            let line = Self.format(y(value))
            svg +=
                "<line class=\"\(step == 0 ? "axis" : "grid")\" x1=\"\(Int(Self.left))\" x2=\"\(Int(Self.width - Self.right))\" y1=\"\(line)\" y2=\"\(line)\"/>"
            svg += "<text x=\"\(Int(Self.left) - 6)\" y=\"\(Self.format(y(value) + 4))\" text-anchor=\"end\">\(value)</text>"
        }
        for index in Set([0, starts.count / 2, starts.count - 1]).sorted() where starts.indices.contains(index) {
            let anchor = index == 0 ? "start" : index == starts.count - 1 ? "end" : "middle"
            svg +=
                "<text x=\"\(Self.format(x(index)))\" y=\"\(Int(Self.height) - 14)\" text-anchor=\"\(anchor)\">\(label(starts[index]))</text>"
        }
        for (number, line) in series.enumerated() {
            let points = line.values.enumerated().map { "\(Self.format(x($0.offset))),\(Self.format(y($0.element)))" }.joined(
                separator: " ")
            svg += "<polyline class=\"series-\(number % 8)\" points=\"\(points)\"><title>\(Self.escaped(line.label))</title></polyline>"
        }
        return svg + "</svg>"
    }

    /// The smallest of 1, 2, 5 × 10ⁿ at or above `value` (at least 2, so the middle line is whole).
    static func roundedUp(_ value: Int) -> Int {
        var scale = 1
        while true {
            for step in [1, 2, 5] where step * scale >= max(value, 2) { return step * scale }
            scale *= 10
        }
    }

    /// The charts' calendar: Gregorian, in UTC.
    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        return calendar
    }()

    private func label(_ date: Date) -> String {
        let parts = Self.utc.dateComponents([.month, .day, .hour, .minute], from: date)
        let time = String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
        return windowSeconds >= 86_400
            ? String(format: "%02d-%02d", parts.month ?? 0, parts.day ?? 0)
            : windowSeconds >= 21_600 ? String(format: "%02d-%02d ", parts.month ?? 0, parts.day ?? 0) + time : time + " UTC"
    }

    private static func format(_ value: Double) -> String { String(format: "%.1f", value) }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
