import Foundation
import HTTPTypes
import ModelDepotShared

/// Someone holding only the app key (anyone with the app's binary), sending from one network: it
/// makes up installation ids, fetches each one's manifest — and with it the exposure token the
/// server gives any installation — and reports whatever it likes for the version it was given.
/// Its requests reach the server through the fleet's trusted proxy, which forwards its address.
struct ForgedInstallations: Sendable {
    /// One event a forged installation reports.
    struct Event: Sendable {
        var metric: String
        var value: Double? = nil
        var code: String? = nil
    }

    let client: TestServer.Client
    let key: HTTPFields
    /// Where every forged request comes from.
    let address: String
    /// What a forged installation reports for the version it was given; `nil` sends nothing.
    let report: @Sendable (_ version: Int) -> [Event]?

    /// Makes up `count` installations (`forged-<first>` on) and reports for each.
    /// - Returns: Per version, how many reported; each batch's receipt is checked (kept, none refused).
    func send(_ count: Int, from first: Int, at now: Int) async throws -> [Int: Int] {
        try await withThrowingTaskGroup(of: Int?.self) { group in
            var next = first
            func add() {
                let index = next
                next += 1
                group.addTask { try await self.forge(index, at: now) }
            }
            for _ in 0..<min(8, count) { add() }
            var reported: [Int: Int] = [:]
            while let version = try await group.next() {
                if let version { reported[version, default: 0] += 1 }
                if next < first + count { add() }
            }
            return reported
        }
    }

    private func forge(_ index: Int, at now: Int) async throws -> Int? {
        var headers = key
        headers[HTTPField.Name("X-Forwarded-For")!] = address
        let sent = headers
        headers[HTTPField.Name(DepotHeader.installationID)!] = "forged-\(index)"
        let answer = try await client.request(.get, "/v1/models/flowers/manifest", headers: headers)
        guard answer.status == .ok, let exposure = answer.headers[HTTPField.Name(DepotHeader.exposure)!] else {
            throw TestServer.Failure("forged manifest: \(answer.status) \(answer.text)")
        }
        let manifest = try answer.manifest()
        guard let events = report(manifest.version) else { return nil }
        let batch = OutcomeBatch(
            batch: UUID().uuidString, installation: "forged-\(index)",
            events: events.map {
                .init(metric: $0.metric, version: manifest.version, arm: manifest.arm, at: now, value: $0.value, code: $0.code)
            },
            exposures: [.init(version: manifest.version, arm: manifest.arm, token: exposure)])
        let receipt = try await client.json(.post, "/v1/models/flowers/events", batch, headers: sent)
        guard receipt.status == .ok, try receipt.decode(OutcomeReceipt.self).refused == nil else {
            throw TestServer.Failure("forged events: \(receipt.status) \(receipt.text)")
        }
        return manifest.version
    }
}
