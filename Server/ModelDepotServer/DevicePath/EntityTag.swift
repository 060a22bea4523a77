/// Entity-tag comparisons for conditional requests (RFC 9110 §8.8.3, §13.1).
enum EntityTag {
    /// Whether an `If-None-Match` header matches `tag` (a quoted strong tag): weak comparison,
    /// a comma-separated list or `*`.
    static func ifNoneMatch(_ header: String?, matches tag: String) -> Bool {
        guard let header else { return false }
        if header == tag { return true }
        if header.trimmingSpaces == "*" { return true }
        let opaque = tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
        return header.split(separator: ",").contains { candidate in
            let value = candidate.trimmingSpaces
            return (value.hasPrefix("W/") ? String(value.dropFirst(2)) : value) == opaque
        }
    }

    /// Whether the `If-None-Match` of `fields` matches `tag`: the tag itself, as devices send it,
    /// is compared on its bytes; anything else as ``ifNoneMatch(_:matches:)`` reads it.
    static func ifNoneMatch(in fields: some DeviceFields, matches tag: String) -> Bool {
        switch fields.withValue(.ifNoneMatch, { $0?.spells(tag) }) {
        case nil: false
        case true?: true
        case false?: ifNoneMatch(fields[device: .ifNoneMatch], matches: tag)
        }
    }

    /// Whether an `If-Range` header allows a partial response: a strong tag equal to `tag`.
    /// Weak tags and dates never match (the blob's tags are strong and it has no date).
    static func ifRange(_ header: String?, matches tag: String) -> Bool {
        guard let header else { return true }
        let value = header.trimmingSpaces
        return !value.hasPrefix("W/") && value == tag
    }
}
