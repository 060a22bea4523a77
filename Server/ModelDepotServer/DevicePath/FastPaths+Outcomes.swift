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
    /// A batch sent to `POST /v1/models/{name}/events`, read and checked as the router would, or
    /// `nil` for the router: another request, a key that may not send it, a body
    /// ``OutcomeBatchReader`` does not read, or a batch that breaks a rule (the router answers
    /// with the reason).
    func outcomeBatch(
        _ request: FastPathRequest, body: UnsafeRawBufferPointer, from peer: @autoclosure () -> String?,
        verified: inout VerifiedKey?
    ) -> OutcomeSubmission? {
        let path = request.path.utf8
        guard Self.isOutcomeBatch(request.path),
            let name = try? ModelName(
                String(Substring(path.dropFirst(DeviceRoute.manifestPrefix.utf8.count).dropLast(DeviceRoute.eventsSuffix.utf8.count)))),
            let key = key(request, peer: peer(), verified: &verified),
            (try? key.checkMayRead(name)) != nil,
            let batch = OutcomeBatchReader.read(body),
            let record = try? batch.record(now: experiments.clock())
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

    /// Applies a checked batch with the others waiting (``OutcomeWriter``); `completion` runs on
    /// `eventLoop` with the receipt the router would send, or `nil` when the catalog refused the
    /// batch or failed (the router then answers the request, and finds the same).
    func submit(_ submission: OutcomeSubmission, on eventLoop: any EventLoop, completion: @escaping @Sendable (FastPathAnswer?) -> Void) {
        let record = submission.record
        experiments.writer.submit(record, of: submission.model, on: eventLoop) { result in
            guard case .success(let applied) = result else { return completion(nil) }
            completion(Self.receipt(record.receipt(applied: applied)))
        }
    }

    /// The receipt as ``JSONResponse`` writes it: sorted keys (the batch id is a lower-case UUID).
    static func receipt(_ receipt: OutcomeReceipt) -> FastPathAnswer {
        var body = ByteBuffer()
        body.writeString("{\"accepted\":\(receipt.accepted),\"batch\":\"\(receipt.batch)\",\"duplicate\":\(receipt.duplicate)}")
        return FastPathAnswer(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8", .contentLength: String(body.readableBytes)],
            body: body)
    }
}
