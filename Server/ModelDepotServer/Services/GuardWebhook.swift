import AsyncHTTPClient
import Crypto
import Foundation
import ModelDepotRollouts
import ModelDepotShared
import NIOCore

/// Posts a guard's moves to its webhook: JSON, signed with HMAC-SHA256 over the timestamp and the
/// body (`Depot-Signature: t=<unix seconds>,v1=<hex>`), retried with backoff until the receiver
/// answers 2xx or ``maximumAttempts`` have failed.
struct GuardWebhook: Sendable {
    /// What is posted.
    struct Payload: Codable, Sendable {
        /// The delivery's id (also `Depot-Delivery`): the same on every attempt, so a receiver can
        /// drop a repeat.
        var delivery: String
        var model: String
        var rule: String
        var ruleId: String
        var control: Int
        var target: Int
        /// The guard's state after the move.
        var state: RolloutGuard.State
        var move: RolloutGuard.Move
    }

    static let maximumAttempts = 8
    /// 30 s after the first failure, doubling up to an hour.
    static func delay(afterAttempt attempts: Int) -> TimeInterval {
        min(30 * pow(2, Double(max(attempts - 1, 0))), 3_600)
    }

    let http: HTTPClient

    /// `t=<timestamp>,v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`.
    static func signature(secret: String, timestamp: Int, body: Data) -> String {
        var signed = Data("\(timestamp).".utf8)
        signed.append(body)
        let code = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Data(secret.utf8)))
        return "t=\(timestamp),v1=\(Array(code).hex)"
    }

    /// Sends one delivery.
    /// - Returns: `nil` when the receiver answered 2xx, else what went wrong.
    func send(_ payload: Payload, to url: URL, secret: String, at now: Date) async -> String? {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        guard let body = try? encoder.encode(payload) else { return "the move could not be encoded" }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "ModelDepot-Guard")
        request.headers.add(name: "Depot-Delivery", value: payload.delivery)
        request.headers.add(
            name: "Depot-Signature", value: Self.signature(secret: secret, timestamp: Int(now.timeIntervalSince1970), body: body))
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await http.execute(request, timeout: .seconds(10))
            _ = try? await response.body.collect(upTo: 64 * 1024)
            return (200..<300).contains(Int(response.status.code)) ? nil : "the receiver answered \(response.status.code)"
        } catch {
            return "could not reach \(url.host ?? "the receiver"): \(error)"
        }
    }
}
