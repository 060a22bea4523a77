import ModelDepotShared
import Synchronization

/// How many installations each client network may add to a model's counted outcomes per hour:
/// the first ``perHour`` installations whose batches with exposure tokens come from one network
/// in an hour count; the rest are kept but counted apart (network 0), so a flood of made-up
/// installations from one place cannot outweigh the devices spread over many.
///
/// Kept in memory, per replica (each replica admits up to ``perHour``), and bounded: once
/// ``maximumTracked`` installations are tracked in an hour, further ones are not counted until
/// the next hour, so many networks cannot grow it either.
final class NetworkBudget: Sendable {
    private struct Key: Hashable {
        let model: ModelName
        let network: Int64
    }

    private struct State {
        var hour = Int.min
        var seen: [Key: Set<Int64>] = [:]
        var tracked = 0
    }

    /// Installations per network, model and hour.
    let perHour: Int
    /// Installations tracked in an hour, over all networks and models.
    let maximumTracked: Int
    private let state = Mutex(State())

    /// The default of `depot serve --outcome-installations-per-network`.
    static let defaultPerHour = 100

    init(perHour: Int = NetworkBudget.defaultPerHour, maximumTracked: Int = 1_000_000) {
        self.perHour = perHour
        self.maximumTracked = maximumTracked
    }

    /// Whether `installation`'s outcomes for `model` from `network` count in `hour`: it is
    /// among the network's first ``perHour`` installations of the hour (one already counted
    /// stays counted).
    func admits(model: ModelName, network: Int64, installation: Int64, hour: Int) -> Bool {
        state.withLock { state in
            // A new hour starts every network afresh (a late batch of the hour before counts in this one).
            if hour > state.hour { state = State(hour: hour) }
            let key = Key(model: model, network: network)
            if state.seen[key]?.contains(installation) == true { return true }
            guard state.seen[key, default: []].count < perHour, state.tracked < maximumTracked else { return false }
            state.seen[key, default: []].insert(installation)
            state.tracked += 1
            return true
        }
    }
}
