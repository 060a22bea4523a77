import ModelDepotShared

extension ExperimentMetric.Kind {
    /// The statistic that the installations' values make.
    public var statistic: MetricStatistic.Kind { self == .proportion ? .proportion : .mean }
}

extension ExperimentMetric {
    /// The difference verdicts and guardrails read: a proportion's absolute one (a failure rate
    /// that rises from 0 has no relative change), a sum's or mean's relative one.
    public var judgedBy: EffectTest.Difference { kind == .proportion ? .absolute : .relative }
}
