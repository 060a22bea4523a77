import Testing

@testable import ModelDepotServer

/// The backoff's arithmetic, on a clock the test moves.
@Suite struct AuthenticationThrottleTests {
    let start = ContinuousClock.now

    @Test func theBackoffDoublesAfterTheAllowanceUpToFiveMinutes() {
        let throttle = AuthenticationThrottle(allowance: 2)
        var waits: [Duration?] = []
        for _ in 0..<14 {
            throttle.failed(address: "10.0.0.1", keyID: nil, now: start)
            waits.append(throttle.wait(address: "10.0.0.1", now: start))
        }
        #expect(waits == [nil, nil] + [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300].map { Duration.seconds($0) })
        #expect(throttle.wait(address: "10.0.0.1", now: start + .seconds(299)) == .seconds(1))
        #expect(throttle.wait(address: "10.0.0.1", now: start + .seconds(300)) == nil)
        #expect(throttle.wait(address: "10.0.0.2", now: start) == nil, "only the failing address waits")
    }

    @Test func aSuccessEndsAnAddressesCountButNotAKeysCount() {
        let throttle = AuthenticationThrottle(allowance: 1)
        throttle.failed(address: "10.0.0.1", keyID: "abc", now: start)
        throttle.succeeded(address: "10.0.0.1")
        throttle.failed(address: "10.0.0.1", keyID: "abc", now: start)
        #expect(throttle.wait(address: "10.0.0.1", now: start) == nil, "the count started again after the success")
        #expect(throttle.wait(keyID: "abc", now: start) == .seconds(1), "two wrong secrets for the key")
        #expect(throttle.wait(keyID: "abd", now: start) == nil)
    }
}
