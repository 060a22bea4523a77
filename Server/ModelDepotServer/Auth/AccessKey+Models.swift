import ModelDepotShared

extension AccessKey {
    /// Refuses a key limited to other models (`forbidden`): what a device may read, it may also
    /// report outcomes for.
    func checkMayRead(_ name: ModelName) throws {
        if let allowed = models, !allowed.contains(name) {
            throw DepotError(.forbidden, "Key '\(id)' may read \(allowed.map(\.rawValue).joined(separator: ", ")), not '\(name)'.")
        }
    }
}
