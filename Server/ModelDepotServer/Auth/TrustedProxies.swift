/// The proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed (`--trusted-proxy`).
///
/// From any other peer those fields are ignored: the client is the peer, and its scheme is the
/// connection's. From a trusted peer, the client is the right-most `X-Forwarded-For` entry that is
/// not itself a trusted proxy (each proxy appends the address it was reached from, so entries
/// further left are only what the client claimed); its scheme is the first `X-Forwarded-Proto`
/// value.
struct TrustedProxies: Sendable {
    /// Where a request comes from, as far as the server can tell.
    struct Client: Sendable, Equatable {
        /// The address authentication failures are counted and throttled by.
        var address: String?
        /// Whether the client reached the server (or its first proxy) over https.
        var isHTTPS: Bool
    }

    /// At most this many `X-Forwarded-For` entries are read, from the right.
    static let maximumHops = 16

    let ranges: [AddressRange]

    init(_ ranges: [AddressRange] = []) {
        self.ranges = ranges
    }

    /// Whether `address` is one of the trusted proxies.
    func trusts(_ address: [UInt8]) -> Bool {
        ranges.contains { $0.contains(address) }
    }

    /// The client of a request from `peer` carrying these fields.
    func client(peer: String?, forwardedFor: String?, forwardedProto: String?) -> Client {
        guard !ranges.isEmpty, let peer, let peerBytes = AddressRange.bytes(peer), trusts(peerBytes) else {
            return Client(address: peer, isHTTPS: false)
        }
        var address = peer
        for entry in (forwardedFor ?? "").split(separator: ",").reversed().prefix(Self.maximumHops) {
            let entry = entry.trimmingSpaces
            // Not an address: nothing to its left can be believed either; the last trusted hop stands.
            guard let bytes = AddressRange.bytes(entry) else { break }
            address = entry
            guard trusts(bytes) else { break }
        }
        let scheme = forwardedProto?.split(separator: ",", omittingEmptySubsequences: false).first?.trimmingSpaces
        return Client(address: address, isHTTPS: scheme?.lowercased() == "https")
    }
}
