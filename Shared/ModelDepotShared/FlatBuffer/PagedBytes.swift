import Foundation

/// A file read in pages on demand, for verifying a model that is not on this machine's disk
/// (an upload in an object store): the verifier reads only the model's structure, so only the
/// pages holding it are fetched, and at most `capacity` pages are kept.
///
/// `fetch(offset, count)` is called synchronously, from the verifying thread, and may block it
/// (never call ``TFLiteVerifier/verify(_:)-(PagedBytes)`` from a task of the cooperative pool).
/// A fetch that fails makes every later read zero and is reported in ``failure``; the verifier
/// then throws that failure instead of a structural error.
public final class PagedBytes: Sendable {
    public let count: Int
    public let pageSize: Int
    public let capacity: Int
    private let fetch: @Sendable (_ offset: Int, _ count: Int) throws -> [UInt8]
    private let state = Locked(State())

    private struct State {
        var pages: [Int: [UInt8]] = [:]
        /// Page numbers, least recently used first.
        var recency: [Int] = []
        var failure: (any Error)?
        var fetches = 0
    }

    /// - Parameters:
    ///   - count: The file's size.
    ///   - pageSize: Bytes per fetch (the last page may be shorter).
    ///   - capacity: Pages kept in memory at most.
    ///   - fetch: Returns exactly `count` bytes from `offset`, or throws.
    public init(
        count: Int, pageSize: Int = 1 << 20, capacity: Int = 16,
        fetch: @escaping @Sendable (_ offset: Int, _ count: Int) throws -> [UInt8]
    ) {
        precondition(pageSize > 0 && capacity > 0)
        self.count = count
        self.pageSize = pageSize
        self.capacity = capacity
        self.fetch = fetch
    }

    /// The first failed fetch, if any.
    public var failure: (any Error)? { state.withLock { $0.failure } }

    /// How many pages were fetched so far.
    public var fetches: Int { state.withLock { $0.fetches } }

    /// The bytes at `offset..<offset + length` (zeros where a fetch failed); the caller keeps
    /// the range inside the file.
    func bytes(at offset: Int, length: Int) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(length)
        var position = offset
        while position < offset + length {
            let number = position / pageSize
            let page = self.page(number)
            let start = position - number * pageSize
            let end = min(page.count, start + (offset + length - position))
            guard start < end else {
                result.append(contentsOf: repeatElement(0, count: offset + length - position))
                break
            }
            result.append(contentsOf: page[start..<end])
            position += end - start
        }
        return result
    }

    func load<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        var value: T = 0
        for (index, byte) in bytes(at: offset, length: MemoryLayout<T>.size).enumerated() {
            value |= T(truncatingIfNeeded: byte) << (8 * index)
        }
        return value
    }

    private func page(_ number: Int) -> [UInt8] {
        if let cached = state.withLock({ state -> [UInt8]? in
            guard let page = state.pages[number] else { return nil }
            if let position = state.recency.lastIndex(of: number) { state.recency.remove(at: position) }
            state.recency.append(number)
            return page
        }) {
            return cached
        }
        let offset = number * pageSize
        let length = min(pageSize, count - offset)
        let page: [UInt8]
        do {
            guard state.withLock({ $0.failure == nil }) else { return [] }
            page = try fetch(offset, length)
            guard page.count == length else {
                throw DepotError(
                    .sizeMismatch,
                    "Reading \(length) bytes at offset \(offset) returned \(page.count): the file is shorter than its stated \(count) bytes."
                )
            }
        } catch {
            state.withLock { state in
                if state.failure == nil { state.failure = error }
            }
            return []
        }
        state.withLock { state in
            state.fetches += 1
            state.pages[number] = page
            state.recency.append(number)
            if state.recency.count > capacity { state.pages[state.recency.removeFirst()] = nil }
        }
        return page
    }
}
