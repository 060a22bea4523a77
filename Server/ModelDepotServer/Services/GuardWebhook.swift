import AsyncHTTPClient
import Crypto
import Foundation
import ModelDepotRollouts
import ModelDepotShared
import NIOCore

/// Posts a guard's moves to its webhook: JSON, signed with HMAC-SHA256 over the timestamp and the
/// body (`Depot-Signature: t=<unix seconds>,v1=<hex>`), retried with backoff until the receiver
/// answers 2xx or ``maximumAttempts`` have failed.
///
/// Its own client: redirects are not followed (a receiver cannot send the server's request
/// elsewhere), connecting takes at most 5 s, and each attempt, the answer's body included, ends
/// by its ``deadline``, so a receiver that drips a byte a minute costs one attempt its deadline.
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

    /// The client every webhook of the process is posted with (kept for the process's life, as
    /// `HTTPClient.shared` is).
    static let client = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup,
        configuration: HTTPClient.Configuration(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5))))

    let http: HTTPClient
    /// How long one attempt may take, from connecting to the answer's last byte.
    let deadline: TimeAmount

    init(http: HTTPClient = GuardWebhook.client, deadline: TimeAmount = .seconds(10)) {
        self.http = http
        self.deadline = deadline
    }

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
        let (http, deadline, sent) = (http, deadline, request)
        let end = NIODeadline.now() + deadline
        // The exchange, its answer's body included, races the deadline; the loser is cancelled.
        let answer = await withTaskGroup(of: Result<UInt, any Error>?.self) { group in
            group.addTask {
                do {
                    let response = try await http.execute(sent, deadline: end)
                    // The answer's body is read (within the deadline) but not judged: a large one is fine.
                    _ = try? await response.body.collect(upTo: 64 * 1024)
                    return .success(response.status.code)
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try? await Task.sleep(for: .nanoseconds(deadline.nanoseconds))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        switch answer {
        case .success(let status)?:
            return (200..<300).contains(status) ? nil : "the receiver answered \(status)"
        case .failure(let error)?:
            return "could not reach \(url.host ?? "the receiver"): \(error)"
        case nil:
            return "\(url.host ?? "the receiver") did not answer within \(deadline.nanoseconds / 1_000_000) ms"
        }
    }
}
