import Foundation
import ModelDepotRollouts
import ModelDepotShared

extension OutcomeBatch {
    /// The batch checked and added up for the catalog.
    /// - Parameters:
    ///   - now: The server's clock: events older than ``maximumAge`` or further ahead than
    ///     ``maximumSkew`` are refused.
    ///   - identifiers: What the installation id is stored as.
    ///   - network: The client network an event with an exposure token counts for (0: none,
    ///     its events are kept apart as those without a token are).
    ///   - exposure: Checks the exposure token of a version and arm (``ExposureToken``), once for
    ///     all their events: `true` counts them, `false` keeps them apart (a key the server no
    ///     longer holds); events whose token it refuses are left out and listed in
    ///     ``OutcomeBatchRecord/refused``, the rest kept. Events whose version and arm have no
    ///     token in ``exposures`` are kept apart.
    /// - Throws: ``DepotError`` (`invalid_events`) naming the first event or field that breaks a
    ///   rule, and what to send instead.
    func record(
        now: Date, identifiers: IdentifierKey, network: Int64 = 0, exposure verify: (Exposure) throws(DepotError) -> Bool
    ) throws
        -> OutcomeBatchRecord
    {
        guard let id = Self.lowercasedID(batch) else {
            throw DepotError(
                .invalidEvents,
                "Batch id '\(batch.prefix(80))' is not a UUID; give each batch a random UUID (sending a batch again with the same id is harmless)."
            )
        }
        guard (1...256).contains(installation.utf8.count) else {
            throw DepotError(
                .invalidEvents,
                "The installation id has \(installation.utf8.count) bytes; send the 1 to 256 bytes the SDK sends with manifests.")
        }
        guard events.count <= Self.maximumEvents else {
            throw DepotError(.invalidEvents, "The batch holds \(events.count) events; send at most \(Self.maximumEvents) per batch.")
        }
        guard (0...Int(Int32.max)).contains(dropped) else {
            throw DepotError(.invalidEvents, "dropped=\(dropped) is not a count from 0 to \(Int32.max).")
        }
        let tokens = try exposureTokens()
        let seconds = now.timeIntervalSince1970
        let oldest = Int(seconds - Self.maximumAge)
        let newest = Int(seconds + Self.maximumSkew)
        // Keyed by the arm's text, which names one arm (``CountedArm/init(stored:)``), so that
        // no arm's text is made again to compare or hash it.
        var totalKeys = KeyPositions<TotalKey>(), totals: [OutcomeBatchRecord.Total] = []
        // Each version and arm: its arm read once, its token checked once, the hour it was first seen.
        var pairKeys = KeyPositions<ExposureKey>(), pairs: [Pair] = []
        var appMetrics: Set<String> = []
        var refused = OutcomeRefusals()
        var appMetricEvents: [String: [Int]] = [:]
        // The SDK sends one version and arm for most of a batch's events: not looked up again.
        var last: (version: Int, arm: String, pair: Int)?
        for (index, event) in events.enumerated() {
            let position: (position: Int, inserted: Bool)
            if let last, last.version == event.version, last.arm == event.arm {
                position = (last.pair, false)
            } else {
                position = pairKeys.position(of: ExposureKey(version: event.version, arm: event.arm))
            }
            let (arm, health) = try check(
                event, at: index, oldest: oldest, newest: newest, arm: position.inserted ? nil : pairs[position.position].arm)
            last = (event.version, event.arm, position.position)
            let hour = event.at / 3_600
            if position.inserted {
                let token = tokens[ExposureKey(version: event.version, arm: event.arm)]
                let verdict = Result { () throws(DepotError) -> Int64 in
                    guard let token else { return 0 }
                    return try verify(Exposure(version: event.version, arm: event.arm, token: token)) ? network : 0
                }
                pairs.append(Pair(arm: arm, verdict: verdict, hour: hour))
            }
            let counted: Int64
            switch pairs[position.position].verdict {
            case .success(let network): counted = network
            case .failure(let error):
                refused.add(index, error)
                continue
            }
            pairs[position.position].hour = min(hour, pairs[position.position].hour)
            if health == nil {
                appMetrics.insert(event.metric)
                appMetricEvents[event.metric, default: []].append(index)
            }
            let count = event.count ?? 1
            let value = event.value ?? Double(count)
            let total = totalKeys.position(
                of: TotalKey(version: event.version, hour: hour, network: counted, metric: event.metric, arm: event.arm))
            if total.inserted {
                totals.append(
                    .init(metric: event.metric, arm: arm, version: event.version, hour: hour, network: counted, count: count, sum: value))
            } else {
                totals[total.position].count += count
                totals[total.position].sum += value
            }
        }
        let exposures = zip(pairKeys.keys, pairs).compactMap { key, pair -> OutcomeBatchRecord.Exposure? in
            guard case .success(let network) = pair.verdict else { return nil }
            return .init(arm: pair.arm, version: key.version, hour: pair.hour, network: network)
        }
        return OutcomeBatchRecord(
            id: id, installation: identifiers.installation(installation), receivedHour: Int(seconds / 3_600), events: events.count,
            totals: totals, exposures: exposures, appMetrics: appMetrics, refused: refused, appMetricEvents: appMetricEvents)
    }

    /// The batch's tokens by version and arm.
    /// - Throws: ``DepotError`` (`invalid_events`) for more tokens than events may have, or two for one version and arm.
    private func exposureTokens() throws(DepotError) -> [ExposureKey: String] {
        guard exposures.count <= Self.maximumEvents else {
            throw DepotError(
                .invalidEvents, "The batch lists \(exposures.count) exposures; send at most one per version and arm of its events.")
        }
        var tokens: [ExposureKey: String] = [:]
        for exposure in exposures
        where tokens.updateValue(exposure.token, forKey: ExposureKey(version: exposure.version, arm: exposure.arm)) != nil {
            throw DepotError(
                .invalidEvents,
                "The batch lists two exposure tokens for version \(exposure.version) through arm '\(exposure.arm.prefix(80))'; send the newest one only."
            )
        }
        return tokens
    }

    /// A version and arm of the batch's events.
    private struct Pair {
        let arm: CountedArm
        /// The network its events count for, or why they are refused.
        let verdict: Result<Int64, DepotError>
        /// The hour of its first kept event.
        var hour: Int
    }

    /// Cheap comparisons first: the version and hour before the texts.
    private struct TotalKey: Hashable {
        let version: Int
        let hour: Int
        let network: Int64
        let metric: String
        let arm: String
    }

    private struct ExposureKey: Hashable {
        let version: Int
        let arm: String
    }

    /// The event's arm and model-health metric (`nil` for an app's), or the error naming what it breaks.
    /// - Parameter known: The arm `event.arm` reads as, when an event before it had the same text.
    private func check(_ event: Event, at index: Int, oldest: Int, newest: Int, arm known: CountedArm?) throws -> (
        CountedArm, ExperimentMetric.Health?
    ) {
        func refuse(_ what: String) -> DepotError {
            DepotError(.invalidEvents, "Event \(index) (metric '\(event.metric.prefix(80))'): \(what); nothing of the batch was stored.")
        }
        do {
            try ExperimentMetric.checkName(event.metric)
        } catch {
            throw DepotError(.invalidEvents, "Event \(index): \(error.message)")
        }
        guard event.version >= 1 else { throw refuse("version \(event.version) is not a version number (1, 2, 3, …)") }
        let arm = known ?? CountedArm(stored: event.arm)
        if known == nil {
            switch arm {
            case .pin, .default, .latest:
                break
            case .rule(let id) where Self.isRuleID(id):
                break
            case .rule, .unknown, .unrecognized:
                throw refuse(
                    "arm '\(event.arm.prefix(80))' is not one a manifest hands out (default, pin, latest or rule:<id>); send the signed manifest's arm"
                )
            }
        }
        guard (oldest...newest).contains(event.at) else {
            throw refuse(
                "its time \(event.at) is not within the last 7 days of the server's clock (\(newest - Int(OutcomeBatch.maximumSkew))); send events within a week, in seconds since 1970"
            )
        }
        if let value = event.value, !(value.isFinite && abs(value) <= OutcomeBatch.maximumValue) {
            throw refuse("value \(value) is not a finite number within ±\(OutcomeBatch.maximumValue)")
        }
        if let count = event.count, !(1...Event.maximumCount).contains(count) {
            throw refuse("count \(count) is not from 1 to \(Event.maximumCount)")
        }
        if let code = event.code,
            !(1...64).contains(code.utf8.count)
                || !code.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) })
        {
            throw refuse("code '\(code.prefix(80))' is not an error code (1 to 64 characters of a-z and '_')")
        }
        let health = ExperimentMetric.Health(rawValue: event.metric)
        if health == .inferenceLatency, (event.value ?? -1) < 0 {
            throw refuse("a latency needs a value of 0 ms or more")
        }
        return (arm, health)
    }

    /// A UUID in its 36-character form (hex digits in any case) in lower case, or `nil`: read as
    /// `UUID(uuidString:)` reads it, without making a `UUID` and its text again, except that a
    /// space or '-' where a hex digit belongs (which Foundation takes) is refused.
    static func lowercasedID(_ text: String) -> String? {
        guard text.utf8.count == 36 else { return nil }
        var lower = true
        for (index, byte) in text.utf8.enumerated() {
            switch index {
            case 8, 13, 18, 23:
                guard byte == UInt8(ascii: "-") else { return nil }
            default:
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): break
                case UInt8(ascii: "A")...UInt8(ascii: "F"): lower = false
                default: return nil
                }
            }
        }
        return lower ? text : text.lowercased()
    }

    /// A rule id as the server makes them (`r-1a2b3c4d`): 1 to 64 characters of a-z, 0-9 and '-'.
    private static func isRuleID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy {
                $0 == UInt8(ascii: "-") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
            }
    }
}

extension OutcomeBatch {
    /// The hour before which batch ids and hourly event counts are forgotten: a day past
    /// ``maximumAge``, since a device never sends a batch again that late.
    static func prunedBeforeHour(now: Date) -> Int {
        Int((now.timeIntervalSince1970 - maximumAge) / 3_600) - 24
    }
}
