import ModelDepotShared
import Synchronization

/// Counters for `/metrics` in Prometheus' text format: requests by route, method and status,
/// blob bytes served, uploads, the share of manifest checks answered `304`, failed and throttled
/// authentications, connections closed by timeouts and limits, request log lines dropped, and
/// the patches made (how many, their bytes against their files', the time making them).
/// Counted in memory; no request writes to the database for it.
final class ServerMetrics: Sendable {
    private struct RequestKey: Hashable {
        let route: String
        let method: String
        let status: Int

        /// Hashes lengths, not text: a handful of routes and methods, counted on every request.
        func hash(into hasher: inout Hasher) {
            hasher.combine(status)
            hasher.combine(route.utf8.count)
            hasher.combine(method.utf8.count)
        }
    }

    private struct Counts {
        var requests: [RequestKey: Int] = [:]
        var blobBytes = 0
        var uploadsStored = 0
        var uploadsRejected = 0
        var manifestsFull = 0
        var manifestsNotModified = 0
        var authenticationFailures = 0
        var throttled = 0
        var closed: [ConnectionGuard.Reason: Int] = [:]
        var patches: [PatchResult: Int] = [:]
        var patchBytes = 0
        var patchFileBytes = 0
        var patchSeconds = 0.0
    }

    /// What became of a patch made: offered to devices, too large to offer, or not making its file.
    enum PatchResult: String, CaseIterable {
        case offered
        case tooLarge = "too_large"
        case broken
    }

    private let counts = Mutex(Counts())
    private let requestLog: RequestLog
    /// Answers ``FastPathHandler`` sent before the router (a test proves the fast path answers).
    private let fastPathAnswers = Atomic<Int>(0)

    init(requestLog: RequestLog) { self.requestLog = requestLog }

    func recordRequest(route: String, method: String, status: Int) {
        counts.withLock { $0.requests[RequestKey(route: route, method: method, status: status), default: 0] += 1 }
    }

    func recordBlobBytes(_ count: Int) { counts.withLock { $0.blobBytes += count } }

    func recordUpload(stored: Bool) {
        counts.withLock { stored ? ($0.uploadsStored += 1) : ($0.uploadsRejected += 1) }
    }

    func recordManifest(notModified: Bool) {
        counts.withLock { notModified ? ($0.manifestsNotModified += 1) : ($0.manifestsFull += 1) }
    }

    func recordFastPathAnswer() { fastPathAnswers.add(1, ordering: .relaxed) }

    func recordAuthenticationFailure() { counts.withLock { $0.authenticationFailures += 1 } }

    func recordThrottled() { counts.withLock { $0.throttled += 1 } }

    func recordConnectionClosed(_ reason: ConnectionGuard.Reason) { counts.withLock { $0.closed[reason, default: 0] += 1 } }

    /// A patch made: its result, its size, the size of the file it makes, and how long making it took.
    func recordPatch(_ result: PatchResult, bytes: Int, fileBytes: Int, seconds: Double) {
        counts.withLock { counts in
            counts.patches[result, default: 0] += 1
            counts.patchBytes += bytes
            counts.patchFileBytes += fileBytes
            counts.patchSeconds += seconds
        }
    }

    func exposition() -> String {
        let counts = counts.withLock { $0 }
        var lines = [
            "# HELP depot_http_requests_total HTTP requests by route, method and status.",
            "# TYPE depot_http_requests_total counter",
        ]
        for (key, value) in counts.requests.sorted(by: {
            ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status)
        }) {
            lines.append("depot_http_requests_total{route=\"\(key.route)\",method=\"\(key.method)\",status=\"\(key.status)\"} \(value)")
        }
        let manifests = counts.manifestsFull + counts.manifestsNotModified
        lines += [
            "# HELP depot_blob_bytes_served_total Bytes of model files sent.",
            "# TYPE depot_blob_bytes_served_total counter",
            "depot_blob_bytes_served_total \(counts.blobBytes)",
            "# HELP depot_uploads_total Model uploads by result.",
            "# TYPE depot_uploads_total counter",
            "depot_uploads_total{result=\"stored\"} \(counts.uploadsStored)",
            "depot_uploads_total{result=\"rejected\"} \(counts.uploadsRejected)",
            "# HELP depot_manifest_responses_total Manifest answers by status.",
            "# TYPE depot_manifest_responses_total counter",
            "depot_manifest_responses_total{status=\"200\"} \(counts.manifestsFull)",
            "depot_manifest_responses_total{status=\"304\"} \(counts.manifestsNotModified)",
            "# HELP depot_manifest_not_modified_ratio Share of manifest answers that were 304.",
            "# TYPE depot_manifest_not_modified_ratio gauge",
            "depot_manifest_not_modified_ratio \(manifests == 0 ? 0 : Double(counts.manifestsNotModified) / Double(manifests))",
            "# HELP depot_fast_path_answers_total Manifests and blobs answered from caches, and outcome batches, before the router (also counted above).",
            "# TYPE depot_fast_path_answers_total counter",
            "depot_fast_path_answers_total \(fastPathAnswers.load(ordering: .relaxed))",
            "# HELP depot_authentication_failures_total Requests with a missing, malformed or wrong key (401, or 429 once throttled).",
            "# TYPE depot_authentication_failures_total counter",
            "depot_authentication_failures_total \(counts.authenticationFailures)",
            "# HELP depot_authentication_throttled_total Requests refused with 429 after too many failed authentications.",
            "# TYPE depot_authentication_throttled_total counter",
            "depot_authentication_throttled_total \(counts.throttled)",
            "# HELP depot_connections_closed_total Connections the server closed itself, by reason (timeouts and limits).",
            "# TYPE depot_connections_closed_total counter",
        ]
        for reason in ConnectionGuard.Reason.allCases {
            lines.append("depot_connections_closed_total{reason=\"\(reason.rawValue)\"} \(counts.closed[reason] ?? 0)")
        }
        lines += [
            "# HELP depot_patches_made_total Patches made between versions, by result: offered, too_large (above the share offered), broken (not making their file).",
            "# TYPE depot_patches_made_total counter",
        ]
        for result in PatchResult.allCases {
            lines.append("depot_patches_made_total{result=\"\(result.rawValue)\"} \(counts.patches[result] ?? 0)")
        }
        lines += [
            "# HELP depot_patch_bytes_total Bytes of the patches made; against depot_patch_file_bytes_total, their share of the files they make.",
            "# TYPE depot_patch_bytes_total counter",
            "depot_patch_bytes_total \(counts.patchBytes)",
            "# HELP depot_patch_file_bytes_total Bytes of the files the patches made make.",
            "# TYPE depot_patch_file_bytes_total counter",
            "depot_patch_file_bytes_total \(counts.patchFileBytes)",
            "# HELP depot_patch_seconds_total Seconds spent making patches (and checking that each makes its file).",
            "# TYPE depot_patch_seconds_total counter",
            "depot_patch_seconds_total \(counts.patchSeconds)",
            "# HELP depot_request_log_dropped_total Request log lines dropped because requests came faster than the log was written.",
            "# TYPE depot_request_log_dropped_total counter",
            "depot_request_log_dropped_total \(requestLog.dropped)",
            "# HELP depot_build_info The server's ModelDepot version, in its label; always 1.",
            "# TYPE depot_build_info gauge",
            "depot_build_info{version=\"\(modelDepotVersion)\"} 1",
        ]
        return lines.joined(separator: "\n") + "\n"
    }
}
