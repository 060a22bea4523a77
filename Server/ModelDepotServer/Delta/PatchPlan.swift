import ModelDepotShared

/// Which patches the published versions lack: to each published version's files (the model's and
/// each companion file) from the same file of each of the `sources` published versions before
/// it, when both files are at most `maximumSize` bytes and differ.
struct PatchPlan: Sendable, Hashable {
    /// One patch to make.
    struct Job: Sendable, Hashable {
        var model: ModelName
        var version: Int
        var fromVersion: Int
        /// `""` for the model's file, else the companion file's name.
        var file: String
        var fromSha256: String
        var fromSize: Int
        var sha256: String
        var size: Int
    }

    /// Newest version first: after an upgrade, or a pause, the patches devices are about to
    /// ask for come before those to versions they have moved past.
    var jobs: [Job]

    init(files: [PublishedFile], made: [StoredPatch], sources: Int, maximumSize: Int) {
        let done = Set(made.map { MadeKey(model: $0.model, version: $0.version, fromVersion: $0.fromVersion, file: $0.file) })
        var jobs: [Job] = []
        for (model, files) in Dictionary(grouping: files, by: \.model) {
            let versions = Dictionary(grouping: files, by: \.version)
            let numbers = versions.keys.sorted()
            for (index, number) in numbers.enumerated().reversed() {
                for source in numbers[max(0, index - sources)..<index] {
                    let old = Dictionary((versions[source] ?? []).map { ($0.file, $0) }, uniquingKeysWith: { first, _ in first })
                    for new in (versions[number] ?? []).sorted(by: { $0.file < $1.file }) {
                        guard let old = old[new.file], old.sha256 != new.sha256, old.size <= maximumSize, new.size <= maximumSize,
                            !done.contains(MadeKey(model: model, version: number, fromVersion: source, file: new.file))
                        else { continue }
                        jobs.append(
                            Job(
                                model: model, version: number, fromVersion: source, file: new.file, fromSha256: old.sha256,
                                fromSize: old.size, sha256: new.sha256, size: new.size))
                    }
                }
            }
        }
        self.jobs = jobs.sorted { ($0.version, $0.model.rawValue) > ($1.version, $1.model.rawValue) }
    }

    private struct MadeKey: Hashable {
        let model: ModelName
        let version: Int
        let fromVersion: Int
        let file: String
    }
}
