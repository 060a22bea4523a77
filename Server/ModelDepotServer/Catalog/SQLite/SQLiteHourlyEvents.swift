import GRDB
import Synchronization

/// How many events each installation sent each model in an hour, for the hourly limit
/// (``OutcomeBatch/maximumEventsPerHour``), as the SQLite catalog keeps them: each batch's row
/// holds its installation and its number of events, an hour's counts are added up from those
/// rows once (an index in hour order, without reading the table), and then kept in memory, up to
/// date with the batches the catalog commits. No page is written for them with a batch but its
/// own row. Another connection that writes the file (another process: `PRAGMA data_version`
/// moves) makes them be read again.
final class SQLiteHourlyEvents: Sendable {
    struct Key: Hashable {
        let model: Int64
        let installation: Int64
    }

    /// The events of a transaction's batches, counted once it commits.
    struct Pending {
        fileprivate var hours: [Int: [Key: Int]] = [:]

        mutating func add(_ events: Int, to key: Key, hour: Int) {
            hours[hour, default: [:]][key, default: 0] += events
        }
    }

    private struct State {
        var hours: [Int: [Key: Int]] = [:]
        var dataVersion: Int64?
    }

    private let state = Mutex(State())

    /// Reads the hours a transaction's batches arrived in, unless known and nobody else wrote the file since.
    /// Call it in the transaction, before any of its batches is written.
    func prepare(hours: Set<Int>, _ db: Database) throws {
        let dataVersion = try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA data_version"))
        try state.withLock { state in
            if state.dataVersion != dataVersion {
                state.hours = [:]
                state.dataVersion = dataVersion
            }
            for hour in hours where state.hours[hour] == nil {
                var counts: [Key: Int] = [:]
                let rows = try Row.fetchCursor(
                    db, sql: "SELECT model_id, installation, events FROM outcome_batch WHERE hour = ? AND events > 0",
                    arguments: [hour])
                while let row = try rows.next() {
                    counts[Key(model: row[0], installation: row[1]), default: 0] += row[2]
                }
                state.hours[hour] = counts
            }
        }
    }

    /// The events an installation sent a model in an hour, as committed.
    func committedEvents(_ key: Key, hour: Int) -> Int {
        state.withLock { $0.hours[hour]?[key] ?? 0 }
    }

    /// Counts `pending` once the transaction commits; keeps the last two hours only (a batch
    /// counts in the hour it arrived in).
    func count(_ pending: Pending, _ db: Database) {
        guard !pending.hours.isEmpty else { return }
        db.afterNextTransaction(onCommit: { [self] _ in
            state.withLock { state in
                for (hour, counts) in pending.hours {
                    state.hours[hour, default: [:]].merge(counts, uniquingKeysWith: +)
                }
                if let latest = state.hours.keys.max() {
                    state.hours = state.hours.filter { $0.key >= latest - 1 }
                }
            }
        })
    }
}
