import Foundation
import Hummingbird
import ModelDepotRollouts
import ModelDepotShared

/// Outcome events from devices (`POST /v1/models/{name}/events`, any key that may read the model)
/// and, for admins, the model's metrics and results.
struct ExperimentController {
    let service: ExperimentService
    /// Where a batch comes from (its client network counts).
    let proxies: TrustedProxies

    /// The route of outcome batches, as the request log names it.
    static let eventsRoute = "/v1/models/{name}/events"

    func registerDevice(in group: RouterGroup<AppRequestContext>) {
        group.post("models/:name/events", use: ingest)
    }

    func registerAdmin(in group: RouterGroup<AppRequestContext>) {
        group.get("models/:name/experiment", use: results)
        group.get("models/:name/metrics", use: metrics)
        group.put("models/:name/metrics/:metric", use: declare)
        group.delete("models/:name/metrics/:metric", use: remove)
    }

    func ingest(_ request: Request, context: AppRequestContext) async throws -> Response {
        let name = try context.modelName()
        let record = try service.accept(
            try await request.collectBody(upTo: OutcomeBatch.maximumSize), of: name, key: try context.requirePrincipal(),
            from: context.client(of: request, through: proxies).address)
        return Response(try FastPathAnswer.json(try await service.ingest(record, of: name)))
    }

    func results(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(try await service.results(of: try context.modelName()))
    }

    func metrics(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(try await service.metrics(of: try context.modelName()))
    }

    func declare(_ request: Request, context: AppRequestContext) async throws -> Response {
        let name = try context.modelName()
        let metric = try await request.decodeJSON(MetricDeclaration.self, context: context).metric(
            named: context.parameters.get("metric") ?? "")
        try await service.declare(metric, of: name)
        return try JSONResponse.make(metric)
    }

    func remove(_ request: Request, context: AppRequestContext) async throws -> Response {
        let name = try context.modelName()
        let metric = context.parameters.get("metric") ?? ""
        try ExperimentMetric.checkName(metric)
        try await service.remove(metric: metric, of: name)
        return Response(status: .noContent)
    }
}
