import ModelDepotShared

/// The rules an outcome batch is admitted by, applied once for both catalogs: it names only
/// versions the model has, its installation stays within its hourly events, and it adds app
/// metric names only up to the undeclared limit. One value per model and transaction takes the
/// model's new batches in order: what an admitted batch counts and adds holds for those after it,
/// a refused one counts and adds nothing.
struct OutcomeAdmission {
    /// An installation's hour, where the hourly limit counts.
    struct Hour: Hashable, Comparable {
        let installation: Int64
        let hour: Int
        static func < (a: Self, b: Self) -> Bool { (a.installation, a.hour) < (b.installation, b.hour) }
    }

    let model: ModelName
    let versions: Set<Int>
    /// The model's metric names, declared or not, with those admitted batches added.
    private(set) var metrics: Set<String>
    private(set) var undeclared: Int
    /// The events admitted in this transaction, per installation and hour.
    private(set) var admitted: [Hour: Int] = [:]

    init(model: ModelName, versions: Set<Int>, metrics: Set<String>, undeclared: Int) {
        self.model = model
        self.versions = versions
        self.metrics = metrics
        self.undeclared = undeclared
    }

    /// Whether `batch` names an app metric the model does not have yet.
    private func adds(_ batch: OutcomeBatchRecord) -> Bool { !batch.appMetrics.isSubset(of: metrics) }

    /// Admits `batch`, whose installation had sent `before` events in its hour before this
    /// transaction, or throws why not (``CatalogRule``).
    /// - Returns: The app metric names it adds, to be kept as undeclared.
    mutating func admit(_ batch: OutcomeBatchRecord, sentBefore before: Int) throws(DepotError) -> Set<String> {
        try CatalogRule.checkOutcomeVersions(batch, of: model, existing: versions)
        let hour = Hour(installation: batch.installation, hour: batch.receivedHour)
        try CatalogRule.checkHourlyEvents(before + admitted[hour, default: 0] + batch.events, of: model)
        let new = adds(batch) ? batch.appMetrics.subtracting(metrics) : []
        if !new.isEmpty { try CatalogRule.checkUndeclared(new, of: model, alreadyUndeclared: undeclared) }
        admitted[hour, default: 0] += batch.events
        metrics.formUnion(new)
        undeclared += new.count
        return new
    }
}
