import Foundation
import Hummingbird
import ModelDepotShared

/// The results page: manifests served and downloads completed per version and arm over time
/// (SVG charts drawn here), totals per arm, and the sample-ratio check of every rule.
extension ConsoleController {
    /// The periods offered: hours looked back and the window each point of the charts covers.
    static let periods: [(hours: Int, window: Int, label: String)] = [
        (1, 300, "Last hour, 5-minute windows"), (24, 3_600, "Last 24 hours, hourly windows"),
        (168, 21_600, "Last 7 days, 6-hour windows"), (720, 86_400, "Last 30 days, daily windows"),
    ]

    func registerResults(in console: RouterGroup<AppRequestContext>) {
        console.get("models/:name/results", use: showResults)
    }

    func showResults(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, _) = try await signedIn(request, context: context)
        let name = try context.modelName()
        let asked = request.uri.queryParameters.get("hours").map { String($0) } ?? "24"
        let period = Self.periods.first { "\($0.hours)" == asked }
        let chosen = period ?? Self.periods[1]
        let stats = try await self.stats.stats(of: name, hours: chosen.hours, window: chosen.window)
        let rollout = try await catalog.rollout(of: name)
        return try page(
            "results",
            ConsolePages.ResultsPage(
                csrf: session.csrfToken,
                error: period == nil
                    ? "There is no period of \(asked.prefix(20)) hours here; showing the last 24 hours. Choose one of the periods offered."
                    : nil,
                name: name.rawValue, stats: stats, rollout: rollout, hours: chosen.hours),
            status: period == nil ? .badRequest : .ok)
    }
}
