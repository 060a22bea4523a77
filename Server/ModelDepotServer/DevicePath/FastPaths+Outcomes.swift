import Hummingbird
import ModelDepotShared
import NIOCore

/// An outcome batch read and checked on the fast path, for ``FastPaths/submit(_:on:completion:)``.
struct OutcomeSubmission: Sendable {
    let model: ModelName
    let record: OutcomeBatchRecord
    let key: String
}

extension FastPaths {
    /// A batch sent to `POST /v1/models/{name}/events`, read and checked by the service as the
    /// route does (``ExperimentService/accept(_:of:key:from:)``), or `nil` for the router: another
    /// request, a key that does not verify, or a batch the service refused (the router answers
    /// with the reason).
    func outcomeBatch(
        _ request: FastPathRequest, body: ByteBuffer, from peer: @autoclosure () -> String?, verified: inout VerifiedKey?
    ) -> OutcomeSubmission? {
        let path = request.path.utf8
        guard Self.isOutcomeBatch(request.path),
            let name = try? ModelName(
                String(Substring(path.dropFirst(DeviceRoute.manifestPrefix.utf8.count).dropLast(DeviceRoute.eventsSuffix.utf8.count)))),
            let key = key(request, peer: peer(), verified: &verified),
            let record = try? experiments.accept(
                body, of: name, key: key,
                from: authenticator.proxies.client(peer: peer(), forwardedFor: request.fields[device: .forwardedFor], forwardedProto: nil)
                    .address)
        else { return nil }
        return OutcomeSubmission(model: name, record: record, key: key.id)
    }

    /// Whether a target is `/v1/models/{name}/events` (any name; no query).
    static func isOutcomeBatch(_ target: String) -> Bool {
        let path = target.utf8
        return path.count > DeviceRoute.manifestPrefix.utf8.count + DeviceRoute.eventsSuffix.utf8.count
            && path.starts(with: DeviceRoute.manifestPrefix.utf8) && path.reversed().starts(with: DeviceRoute.eventsSuffix.utf8.reversed())
            && !path.contains(UInt8(ascii: "?"))
    }

    /// Stores a checked batch (``ExperimentService/ingest(_:of:on:completion:)``); `completion`
    /// runs on `eventLoop` with the answer the route sends, or `nil` when the catalog refused the
    /// batch or failed (the router then answers the request, and finds the same).
    func submit(_ submission: OutcomeSubmission, on eventLoop: any EventLoop, completion: @escaping @Sendable (FastPathAnswer?) -> Void) {
        experiments.ingest(submission.record, of: submission.model, on: eventLoop) { result in
            completion(try? FastPathAnswer.json(result.get()))
        }
    }
}
