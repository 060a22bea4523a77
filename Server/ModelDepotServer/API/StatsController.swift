import Foundation
import Hummingbird
import ModelDepotShared

/// `GET /v1/admin/models/{name}/stats?hours=24&window=3600`: usage per version, per arm and per
/// window, and a sample-ratio check of every rule of the current rollout.
struct StatsController {
    let service: StatsService

    func register(in group: RouterGroup<AppRequestContext>) {
        group.get("models/:name/stats", use: stats)
    }

    func stats(_ request: Request, context: AppRequestContext) async throws -> Response {
        let name = try context.modelName()
        let hours = try number(request, "hours", default: 24, in: 1...2_160)
        let window = try number(request, "window", default: 3_600, in: 60...86_400)
        guard window % 60 == 0 else {
            throw DepotError(.badRequest, "window=\(window) is not a whole number of minutes; use a multiple of 60 seconds.")
        }
        return try JSONResponse.make(try await service.stats(of: name, hours: hours, window: window))
    }

    private func number(_ request: Request, _ name: String, default value: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = request.uri.queryParameters.get(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw DepotError(
                .badRequest, "\(name)=\(text.prefix(20)) is not a whole number from \(range.lowerBound) to \(range.upperBound).")
        }
        return number
    }
}
