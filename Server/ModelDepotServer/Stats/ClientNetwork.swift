import Foundation
import ModelDepotShared

/// The prefix lengths client networks are cut at (``ClientNetwork``): `depot serve
/// --outcome-network-prefixes`.
public struct NetworkPrefixes: Sendable, Hashable {
    public var ipv4 = 24
    public var ipv6 = 64

    public init() {}

    /// Reads `24,64`: an IPv4 length from 8 to 32, then an IPv6 one from 16 to 128.
    /// - Throws: ``DepotError`` (`bad_request`) naming the text.
    public init(_ text: String) throws(DepotError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let ipv4 = Int(parts[0]), let ipv6 = Int(parts[1]), (8...32).contains(ipv4), (16...128).contains(ipv6)
        else {
            throw DepotError(
                .badRequest, "'\(text.prefix(40))' is not two prefix lengths, IPv4 (8 to 32) then IPv6 (16 to 128), e.g. 24,64 or 24,48.")
        }
        self.ipv4 = ipv4
        self.ipv6 = ipv6
    }
}

/// The client network an outcome batch came from, as guards count networks: by default the /24
/// of an IPv4 address (IPv4-mapped IPv6 too) and the /64 of an IPv6 one — what one home, office or
/// small provider holds (`depot serve --outcome-network-prefixes`). Kept as a 63-bit value of the
/// prefix under the deployment's ``IdentifierKey``, never 0 (0 marks outcomes that guards and
/// results do not read): the same on every replica and across signing key rotations, and not
/// readable back into an address.
enum ClientNetwork {
    /// The id of the network of `address` under `prefixes`.
    static func id(_ address: String?, _ prefixes: NetworkPrefixes, key: IdentifierKey) -> Int64 {
        key.network(prefix: prefix(of: address, prefixes))
    }

    /// The bytes of the network holding `address` under `prefixes` (the last byte masked), with
    /// the prefix length after them; empty without an address (a request with no peer, as under
    /// the router tester), which is then one network.
    private static func prefix(of address: String?, _ prefixes: NetworkPrefixes) -> [UInt8] {
        guard let address, let bytes = AddressRange.bytes(address) else { return [] }
        let length = bytes.count == 4 ? prefixes.ipv4 : prefixes.ipv6
        var network = Array(bytes.prefix((length + 7) / 8))
        if length % 8 != 0 { network[network.count - 1] &= ~(0xFF >> UInt8(length % 8)) }
        return network + [UInt8(length)]
    }
}
