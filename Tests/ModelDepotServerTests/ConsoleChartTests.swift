import Foundation
import Testing

@testable import ModelDepotServer

/// The results chart's geometry: where each value lands, the scale, the labels and what a
/// screen reader hears.
@Suite struct ConsoleChartTests {
    static let starts = (0..<3).map { Date(timeIntervalSince1970: 1_700_000_000 + TimeInterval($0) * 3_600) }

    static func points(_ svg: String) -> [String: String] {
        Dictionary(
            uniqueKeysWithValues: svg.matches(of: /<polyline class="series-\d" points="([^"]+)"><title>([^<]*)<\/title>/)
                .map { (String($0.output.2), String($0.output.1)) })
    }

    @Test func eachValueLandsAtItsWindowAndHeight() {
        // Given two series over three windows whose largest value is 10 (the scale's top)
        let chart = ConsoleChart(
            id: "manifests", title: "Manifests", starts: Self.starts, windowSeconds: 3_600,
            series: [
                .init(label: "default, v1", values: [0, 5, 10]),
                .init(label: "pinned devices, v2", values: [10, 0, 0]),
            ])
        // Then the windows span the plot from x 52 to 704, and 0, 5, 10 sit at y 220, 118, 16
        let lines = Self.points(chart.svg)
        #expect(lines["default, v1"] == "52.0,220.0 378.0,118.0 704.0,16.0", "\(lines)")
        #expect(lines["pinned devices, v2"] == "52.0,16.0 378.0,220.0 704.0,220.0", "\(lines)")
        // And the axis reads 0, 5, 10; the description gives each series' total
        #expect(chart.svg.contains(">0</text>") && chart.svg.contains(">5</text>") && chart.svg.contains(">10</text>"))
        #expect(chart.svg.contains("<desc id=\"manifests-desc\">Totals: default, v1: 15, pinned devices, v2: 10.</desc>"))
        #expect(
            chart.svg.contains(">22:13 UTC</text>") && chart.svg.contains(">00:13 UTC</text>"), "hour labels of the first and last window")
    }

    @Test func theScaleRoundsUpToOneTwoOrFiveTimesAPowerOfTen() {
        let scales = [0, 1, 2, 3, 7, 10, 11, 40, 51, 999, 1_001].map(ConsoleChart.roundedUp)
        #expect(scales == [2, 2, 2, 5, 10, 10, 20, 50, 100, 1_000, 2_000])
        let chart = ConsoleChart(
            id: "c", title: "t", starts: Self.starts, windowSeconds: 3_600, series: [.init(label: "a", values: [3, 0, 0])])
        #expect(Self.points(chart.svg)["a"] == "52.0,97.6 378.0,220.0 704.0,220.0", "3 of 5 is 60% up the plot")
    }

    @Test func labelsAreEscapedAndAnEmptyChartSaysSo() {
        let hostile = ConsoleChart(
            id: "c", title: "<b>&\"", starts: Self.starts, windowSeconds: 86_400,
            series: [.init(label: "rule '<script>', v1", values: [1, 1, 1])])
        #expect(hostile.svg.contains("<title id=\"c-title\">&lt;b&gt;&amp;&quot;</title>"))
        #expect(hostile.svg.contains("<title>rule '&lt;script&gt;', v1</title>"))
        #expect(!hostile.svg.contains("<script>"))
        #expect(hostile.svg.contains(">11-14</text>"), "a day's window is labelled by its date")
        let empty = ConsoleChart(id: "c", title: "t", starts: Self.starts, windowSeconds: 3_600, series: [])
        #expect(empty.svg.contains("No traffic in this period.") && !empty.svg.contains("<polyline"))
    }
}
