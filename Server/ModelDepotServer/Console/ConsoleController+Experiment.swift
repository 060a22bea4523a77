import Foundation
import Hummingbird
import ModelDepotShared

/// The experiment page: which version wins on each metric, from the outcomes devices send.
extension ConsoleController {
    func registerExperiment(in console: RouterGroup<AppRequestContext>) {
        console.get("models/:name/experiment", use: showExperiment)
    }

    func showExperiment(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, _) = try await signedIn(request, context: context)
        let name = try context.modelName()
        let results = try await experiments.results(of: name)
        let rollout = try await catalog.rollout(of: name)
        return try page(
            "experiment",
            ConsolePages.ExperimentPage(
                csrf: session.csrfToken, error: nil, name: name.rawValue,
                results: results, rollout: rollout))
    }
}
