import Foundation
import ModelDepotShared

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How sending outcomes backs off after a failure: 30 s, doubling up to an hour.
enum OutcomeSchedule {
    static let firstBackoff: Duration = .seconds(30)
    static let longestBackoff: Duration = .seconds(3_600)
}

extension ModelDownloader {
    /// Sends the queued outcomes now (batches sent before without an answer first, with their
    /// ids, so the server applies each once).
    /// - Parameter conditions: When sending is allowed (the configuration's ``ModelDownloaderConfiguration/outcomeConditions`` by default).
    /// - Returns: How many events the server applied.
    /// - Throws: `DepotError`: `conditions_not_met`, `unavailable` (the server could not be
    ///   reached or answered 5xx), `too_many_requests`; what was not sent stays queued.
    @discardableResult
    public func sendOutcomes(conditions: DownloadConditions? = nil) async throws(DepotError) -> Int {
        guard outcomes.isEnabled else { return 0 }
        let unmet = (conditions ?? configuration.outcomeConditions).unmet(by: deviceStatus())
        guard unmet.isEmpty else {
            throw DepotError(.conditionsNotMet, "Outcomes were not sent: \(unmet.joined(separator: "; ")). They stay queued.")
        }
        var applied = 0
        do {
            // Batches left from an earlier attempt first, then the queue as new batches.
            for _ in 0..<2 {
                for batch in outcomes.takeBatches() {
                    applied += try await send(batch)
                    outcomes.finished(batch.id)
                }
            }
        } catch {
            outcomeSchedule = (
                configuration.clock().addingTimeInterval(outcomeSchedule.backoff.seconds),
                min(outcomeSchedule.backoff * 2, OutcomeSchedule.longestBackoff)
            )
            throw error
        }
        outcomeSchedule = (
            configuration.clock().addingTimeInterval(configuration.outcomeSendInterval.seconds), OutcomeSchedule.firstBackoff
        )
        return applied
    }

    /// After a check: sends in the background once the interval (or a failure's backoff) has passed.
    func sendOutcomesIfDue() {
        guard outcomes.isEnabled, outcomes.pendingEvents > 0, configuration.clock() >= outcomeSchedule.due else { return }
        // Not again until this attempt is over.
        outcomeSchedule.due = .distantFuture
        backgroundOutcomeSend = Task { _ = try? await sendOutcomes() }
    }

    /// The events a receipt says the server applied, of a batch of `events`. The receipt is not
    /// signed: a count outside the batch's is no count (added up, it could overflow).
    static func applied(receipt: Data, events: Int) -> Int {
        let accepted = (try? JSONDecoder().decode(OutcomeReceipt.self, from: receipt))?.accepted ?? 0
        return (0...events).contains(accepted) ? accepted : 0
    }

    /// Sends one batch; a refusal the server will never accept drops it (counted by its code in the log).
    private func send(_ batch: OutcomeRecorder.Batch) async throws(DepotError) -> Int {
        var request = URLRequest(
            url: configuration.serverURL.appendingPathComponent(String(DeviceRoute.events(of: batch.model).dropFirst())))
        request.httpMethod = "POST"
        request.setValue("Bearer \(configuration.appKey)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        do {
            request.httpBody = try JSONEncoder().encode(
                OutcomeBatch(
                    batch: batch.id, installation: installationID, events: batch.events, dropped: batch.dropped,
                    exposures: batch.exposures ?? []))
        } catch {
            throw DepotError(.internalError, "Could not encode outcome batch \(batch.id): \(error).")
        }
        let data: Data
        let response: HTTPURLResponse
        do {
            (data, response) = try await configuration.transport.data(for: request, limits: limits(maximumBytes: 64 << 10))
        } catch {
            throw DepotError(
                .unavailable,
                "Could not reach \(configuration.serverURL.absoluteString) to send outcomes: \(Self.describe(error)). They stay queued.")
        }
        switch response.statusCode {
        case 200:
            return Self.applied(receipt: data, events: batch.events.count)
        case 429, 500...:
            throw Self.serverError(data, response)
        default:
            // Refused for good (a version deleted since, a key revoked): sending it again would
            // be refused again.
            return 0
        }
    }
}
