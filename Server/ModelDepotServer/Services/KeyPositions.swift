/// Where each key of a list is: found by looking through the list while it is short (a batch's
/// totals are about 8, and comparing a few is cheaper than hashing one), through a dictionary
/// once it is longer than ``linearCount``, so that a long list costs no more than a dictionary.
struct KeyPositions<Key: Hashable> {
    /// The most keys looked through one by one.
    static var linearCount: Int { 16 }

    private(set) var keys: [Key] = []
    private var index: [Key: Int] = [:]

    /// The key's position, and whether it was added (at the end) by this call.
    mutating func position(of key: Key) -> (position: Int, inserted: Bool) {
        if keys.count <= Self.linearCount {
            if let position = keys.firstIndex(of: key) { return (position, false) }
            keys.append(key)
            if keys.count > Self.linearCount {
                for (position, key) in keys.enumerated() { index[key] = position }
            }
            return (keys.count - 1, true)
        }
        if let position = index[key] { return (position, false) }
        index[key] = keys.count
        keys.append(key)
        return (keys.count - 1, true)
    }
}
