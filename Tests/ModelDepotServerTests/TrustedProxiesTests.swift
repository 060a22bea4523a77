import ModelDepotShared
import Testing

@testable import ModelDepotServer

/// Whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed, and which address is the client.
@Suite struct TrustedProxiesTests {
    static let proxies = TrustedProxies([try! AddressRange("10.0.0.0/8"), try! AddressRange("::1"), try! AddressRange("127.0.0.1")])

    @Test func networksAreParsedAndAddressesMatchedByPrefix() throws {
        let range = try AddressRange("192.168.7.200/20")
        #expect(range.description == "192.168.0.0/20")
        #expect(range.contains(try #require(AddressRange.bytes("192.168.15.255"))))
        #expect(!range.contains(try #require(AddressRange.bytes("192.168.16.0"))))
        #expect(try AddressRange("fd00::1/8").contains(try #require(AddressRange.bytes("fdff::9"))))
        #expect(try AddressRange("10.1.2.3").contains(try #require(AddressRange.bytes("::ffff:10.1.2.3"))), "IPv4-mapped IPv6 is IPv4")
        #expect(try AddressRange("0.0.0.0/0").contains(try #require(AddressRange.bytes("8.8.8.8"))))
    }

    @Test func malformedNetworksAreRefusedWithTheirText() {
        for text in ["", "10.0.0.0/33", "::/129", "10.0.0/8", "10.0.0.0/-1", "10.0.0.0/", "example.com", "10.0.0.0/8/8", "10.0.0.0/٣"] {
            #expect((try? AddressRange(text)) == nil, "\(text)")
        }
        do {
            _ = try AddressRange("10.0.0.0/33")
            Issue.record("accepted")
        } catch let error as DepotError {
            #expect(error.code == .badRequest && error.message.contains("10.0.0.0/33"))
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func anUntrustedPeerIsTheClientWhateverItClaims() {
        let client = Self.proxies.client(peer: "203.0.113.9", forwardedFor: "1.2.3.4", forwardedProto: "https")
        #expect(client == .init(address: "203.0.113.9", isHTTPS: false))
        #expect(
            TrustedProxies().client(peer: "10.0.0.1", forwardedFor: "1.2.3.4", forwardedProto: "https")
                == .init(address: "10.0.0.1", isHTTPS: false),
            "no trusted proxies configured")
    }

    @Test func behindTrustedProxiesTheClientIsTheRightMostUntrustedHop() {
        #expect(
            Self.proxies.client(peer: "10.0.0.5", forwardedFor: "1.2.3.4", forwardedProto: "https")
                == .init(address: "1.2.3.4", isHTTPS: true))
        #expect(
            Self.proxies.client(peer: "10.0.0.5", forwardedFor: "6.6.6.6, 1.2.3.4, 10.9.9.9", forwardedProto: "HTTPS, http").address
                == "1.2.3.4",
            "a spoofed left-most entry is ignored")
        #expect(
            Self.proxies.client(peer: "::1", forwardedFor: "10.1.1.1,10.2.2.2", forwardedProto: nil)
                == .init(address: "10.1.1.1", isHTTPS: false),
            "all trusted: the left-most")
        #expect(Self.proxies.client(peer: "127.0.0.1", forwardedFor: nil, forwardedProto: "http").address == "127.0.0.1")
        #expect(Self.proxies.client(peer: "127.0.0.1", forwardedFor: "garbage, 1.2.3.4", forwardedProto: nil).address == "1.2.3.4")
        #expect(
            Self.proxies.client(peer: "127.0.0.1", forwardedFor: "1.2.3.4, garbage", forwardedProto: nil).address == "127.0.0.1",
            "a hop that is no address ends the walk at the proxy that sent it")
        #expect(
            Self.proxies.client(peer: "127.0.0.1", forwardedFor: String(repeating: "%,", count: 3000), forwardedProto: "\u{0}").address
                == "127.0.0.1")
    }
}
