import Testing

@testable import ModelDepotServer

/// The backoff's arithmetic, on a clock the test moves: per scope and address (an IPv6 one per
/// /64), reset only by a success of the right kind, and bounded.
@Suite struct AuthenticationThrottleTests {
    let start = ContinuousClock.now

    @Test func theBackoffDoublesAfterTheAllowanceUpToFiveMinutes() {
        let throttle = AuthenticationThrottle(allowance: 2)
        var waits: [Duration?] = []
        for _ in 0..<14 {
            throttle.failed(address: "10.0.0.1", keyID: nil, scope: .device, now: start)
            waits.append(throttle.wait(address: "10.0.0.1", scope: .device, now: start))
        }
        #expect(waits == [nil, nil] + [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300].map { Duration.seconds($0) })
        #expect(throttle.wait(address: "10.0.0.1", scope: .device, now: start + .seconds(299)) == .seconds(1))
        #expect(throttle.wait(address: "10.0.0.1", scope: .device, now: start + .seconds(300)) == nil)
        #expect(throttle.wait(address: "10.0.0.2", scope: .device, now: start) == nil, "only the failing address waits")
    }

    @Test func aSuccessEndsAnAddressesCountButNotAKeysCount() {
        let throttle = AuthenticationThrottle(allowance: 1)
        throttle.failed(address: "10.0.0.1", keyID: "abc", scope: .device, now: start)
        throttle.succeeded(address: "10.0.0.1", kind: .app)
        throttle.failed(address: "10.0.0.1", keyID: "abc", scope: .device, now: start)
        #expect(throttle.wait(address: "10.0.0.1", scope: .device, now: start) == nil, "the count started again after the success")
        #expect(throttle.wait(keyID: "abc", now: start) == .seconds(1), "two wrong secrets for the key")
        #expect(throttle.wait(keyID: "abd", now: start) == nil)
    }

    @Test func adminFailuresCountApartAndOnlyAnAdminSuccessEndsThem() {
        let throttle = AuthenticationThrottle(allowance: 1)
        for _ in 0..<2 { throttle.failed(address: "10.0.0.1", keyID: nil, scope: .admin, now: start) }
        #expect(throttle.wait(address: "10.0.0.1", scope: .admin, now: start) == .seconds(1))
        #expect(throttle.wait(address: "10.0.0.1", scope: .device, now: start) == nil, "device routes do not wait for admin failures")
        throttle.succeeded(address: "10.0.0.1", kind: .app)
        #expect(throttle.wait(address: "10.0.0.1", scope: .admin, now: start) == .seconds(1), "an app key's success ends nothing of it")
        throttle.succeeded(address: "10.0.0.1", kind: .admin)
        #expect(throttle.wait(address: "10.0.0.1", scope: .admin, now: start) == nil)
    }

    @Test func anIPv6ClientCountsPerSlash64() {
        let throttle = AuthenticationThrottle(allowance: 1)
        throttle.failed(address: "2001:db8:1:2::1", keyID: nil, scope: .device, now: start)
        throttle.failed(address: "2001:db8:1:2:ffff:ffff:ffff:fffe", keyID: nil, scope: .device, now: start)
        #expect(throttle.wait(address: "2001:db8:1:2::77", scope: .device, now: start) == .seconds(1), "one /64, one count")
        #expect(throttle.wait(address: "2001:db8:1:3::1", scope: .device, now: start) == nil, "the next /64 is another client")
        throttle.failed(address: "10.0.0.1", keyID: nil, scope: .device, now: start)
        throttle.failed(address: "10.0.0.2", keyID: nil, scope: .device, now: start)
        #expect(throttle.wait(address: "10.0.0.1", scope: .device, now: start) == nil, "IPv4 addresses count one by one")
    }

    @Test func aFullTableFailsClosedForAdminRoutesOnly() {
        // 100 addresses backing off fill it: none can be dropped.
        let throttle = AuthenticationThrottle(allowance: 1, capacity: 100)
        for index in 0..<200 { throttle.failed(address: "10.1.0.\(index / 2)", keyID: nil, scope: .device, now: start) }
        #expect(throttle.wait(address: "10.9.9.9", scope: .admin, now: start) == .seconds(1), "an admin attempt it cannot count waits")
        #expect(throttle.wait(address: "10.9.9.9", scope: .device, now: start) == nil, "devices keep working")
        throttle.failed(address: "10.9.9.8", keyID: nil, scope: .device, now: start)
        #expect(throttle.wait(address: "10.9.9.8", scope: .device, now: start) == nil, "a device failure it cannot count is let go")
        #expect(
            throttle.wait(address: "10.9.9.9", scope: .admin, now: start + .seconds(1)) == nil,
            "once the backoffs ended, their records make room")
    }
}
