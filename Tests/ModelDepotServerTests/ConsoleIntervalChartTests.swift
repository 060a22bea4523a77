import Foundation
import Testing

@testable import ModelDepotServer

/// The experiment tiles' chart: each hour's interval as a bar and its estimate as a dot, on a
/// scale that always shows no change, and what a screen reader hears.
@Suite struct ConsoleIntervalChartTests {
    static let hours = (0..<2).map { Date(timeIntervalSince1970: 1_800_000_000 + TimeInterval($0) * 3_600) }

    @Test func eachHoursIntervalAndEstimateLandAtTheirHeights() {
        // Given v2's effect over two hours: +5 points (-5 to +15), then +10 (+2 to +18)
        let chart = ConsoleIntervalChart(
            id: "tile", title: "accepted", unit: "points",
            series: [
                .init(label: "v2", points: [(Self.hours[0], 0.05, -0.05, 0.15), (Self.hours[1], 0.10, 0.02, 0.18)])
            ])
        let svg = chart.svg
        // Then the scale runs from +20 down to -5 points (y 10 to 152), no change at y 123.6
        #expect(svg.contains(#"<line class="axis" x1="48" x2="350" y1="123.6" y2="123.6"/>"#), "\(svg)")
        #expect(svg.contains(">+20</text>") && svg.contains(">0</text>") && svg.contains(">-5</text>"))
        // And each hour's bar spans its interval, its dot at the estimate, in the hour's slot
        #expect(
            svg.contains(
                #"<line class="interval" x1="123.5" x2="123.5" y1="152.0" y2="38.4"/><circle class="estimate" cx="123.5" cy="95.2" r="2.5"/>"#
            ))
        #expect(
            svg.contains(
                #"<line class="interval" x1="274.5" x2="274.5" y1="112.2" y2="21.4"/><circle class="estimate" cx="274.5" cy="66.8" r="2.5"/>"#
            ))
        #expect(svg.contains(#"<desc id="tile-desc">Latest: v2: +10 points (+2 to +18).</desc>"#))
        #expect(svg.contains(">01-15 08:00</text>") && svg.contains(">01-15 09:00</text>"), "the first and last hour, UTC")
    }

    @Test func withoutDataTheScaleStillShowsNoChangeAndSaysSo() {
        let svg = ConsoleIntervalChart(id: "empty", title: "accepted", unit: "%", series: []).svg
        #expect(svg.contains(">No hours with data yet.</desc>"))
        #expect(svg.contains(">+2</text>") && svg.contains(">0</text>") && svg.contains(">-2</text>"), "at least ±1, rounded to 2: \(svg)")
        #expect(!svg.contains("<circle"))
    }
}
