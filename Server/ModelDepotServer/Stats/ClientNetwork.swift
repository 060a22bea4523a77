import Crypto
import Foundation

/// The client network an outcome batch came from, as guards count networks: the /24 of an IPv4
/// address (IPv4-mapped IPv6 too), the /64 of an IPv6 one — what one home, office or small
/// provider holds. Kept as a keyed 63-bit id (HMAC-SHA256 under a key derived from the manifest
/// signing key, so replicas agree and the catalog holds no address), never 0: 0 marks outcomes
/// that guards and results do not read.
enum ClientNetwork {
    /// The network's prefix bytes (3 for IPv4, 8 for IPv6); empty without an address (a request
    /// with no peer, as under the router tester), which is then one network.
    static func prefix(of address: String?) -> [UInt8] {
        guard let address, let bytes = AddressRange.bytes(address) else { return [] }
        return Array(bytes.prefix(bytes.count == 4 ? 3 : 8))
    }

    /// The id of the network with `prefix`.
    static func id(prefix: [UInt8], key: ExposureToken.Key) -> Int64 {
        let mac = Array(HMAC<SHA256>.authenticationCode(for: prefix, using: key.networkSecret))
        let value = mac.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } & 0x7FFF_FFFF_FFFF_FFFF
        return Int64(max(value, 1))
    }
}
