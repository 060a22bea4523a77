import Foundation
import ModelDepotShared

/// An IPv4 or IPv6 network in CIDR notation (`10.0.0.0/8`, `fd00::/8`; a bare address is a
/// network of one). IPv4-mapped IPv6 addresses (`::ffff:10.1.2.3`) are compared as IPv4.
public struct AddressRange: Sendable, Hashable, CustomStringConvertible {
    let network: [UInt8]
    let prefixLength: Int

    /// - Throws: ``DepotError`` (`bad_request`) naming the text when it is not an address or
    ///   network, or its prefix is longer than the address.
    public init(_ text: String) throws {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = Self.bytes(String(parts[0])) else {
            throw DepotError(.badRequest, "'\(text)' is not an IP address or network; write one like 10.0.0.0/8, 192.168.1.7 or fd00::/8.")
        }
        let bits = address.count * 8
        var length = bits
        if parts.count == 2 {
            guard let parsed = Int(parts[1]), (0...bits).contains(parsed), parts[1].allSatisfy(\.isASCII) else {
                throw DepotError(.badRequest, "'\(text)' has a prefix length that is not 0–\(bits); write one like 10.0.0.0/8.")
            }
            length = parsed
        }
        network = Self.masked(address, length)
        prefixLength = length
    }

    /// Whether `address` (text, as a peer's address or an `X-Forwarded-For` entry) lies in it.
    func contains(_ address: [UInt8]) -> Bool {
        address.count == network.count && Self.masked(address, prefixLength) == network
    }

    public var description: String {
        let family = network.count == 4 ? AF_INET : AF_INET6
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        _ = network.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/\(prefixLength)"
    }

    /// An address's bytes (4 for IPv4 and IPv4-mapped IPv6, 16 for IPv6), or `nil` when the
    /// text is not an address. At most 45 characters are read.
    static func bytes(_ text: some StringProtocol) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count <= 45, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        let text = String(text)
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF { return Array(bytes[12...]) }
        return bytes
    }

    private static func masked(_ address: [UInt8], _ length: Int) -> [UInt8] {
        address.enumerated().map { index, byte in
            let kept = min(max(length - index * 8, 0), 8)
            return kept == 8 ? byte : byte & ~(0xFF >> kept)
        }
    }
}
