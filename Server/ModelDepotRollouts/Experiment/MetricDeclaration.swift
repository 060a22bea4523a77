import ModelDepotShared

/// The body of `PUT /v1/admin/models/{name}/metrics/{metric}` (the name is the path's): how an
/// app metric is read. Absent fields take their defaults.
public struct MetricDeclaration: Sendable, Hashable, Codable {
    public var kind: ExperimentMetric.Kind
    /// `increase` when absent.
    public var direction: ExperimentMetric.Direction?
    /// 0 when absent.
    public var tolerance: Double?
    /// `false` when absent.
    public var guardrail: Bool?
    /// No cap when absent.
    public var cap: ExperimentMetric.Cap?

    public init(
        kind: ExperimentMetric.Kind, direction: ExperimentMetric.Direction? = nil, tolerance: Double? = nil, guardrail: Bool? = nil,
        cap: ExperimentMetric.Cap? = nil
    ) {
        self.kind = kind
        self.direction = direction
        self.tolerance = tolerance
        self.guardrail = guardrail
        self.cap = cap
    }

    /// The metric it declares under `name`.
    /// - Throws: ``DepotError`` (`invalid_metric`) for a bad name, tolerance or cap.
    public func metric(named name: String) throws(DepotError) -> ExperimentMetric {
        try ExperimentMetric(
            name: name, kind: kind, direction: direction ?? .increase, tolerance: tolerance ?? 0, guardrail: guardrail ?? false,
            cap: cap)
    }
}
