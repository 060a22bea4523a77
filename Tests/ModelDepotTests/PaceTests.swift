import Testing

@testable import ModelDepot

/// The transport's watchdog arithmetic: the stall timeout counts from the last byte (the head
/// counts as one), the minimum rate only from the head on, over a window that slides with the
/// ticks.
@Suite struct PaceTests {
    let start = ContinuousClock.now
    let limits = TransferLimits(
        maximumBytes: 1 << 20, stallTimeout: .seconds(60),
        minimumRate: TransferRate(bytesPerSecond: 1000, window: .seconds(10)))

    func at(_ seconds: Int) -> ContinuousClock.Instant { start + .seconds(seconds) }

    @Test func aStallIsTheTimeoutWithoutAByteAndEachByteRestartsIt() throws {
        var pace = Pace(now: start)
        #expect(pace.failure(at: at(59), limits: limits) == nil)
        let stalled = try #require(pace.failure(at: at(60), limits: limits) as? TransferStalled)
        #expect(stalled.timeout == .seconds(60) && stalled.received == 0)

        var fed = Pace(now: start)
        fed.headArrived(at: at(30))
        fed.arrived(20_000, at: at(50))
        #expect(fed.failure(at: at(109), limits: TransferLimits(maximumBytes: 1, stallTimeout: .seconds(60))) == nil)
        let late = try #require(
            fed.failure(at: at(110), limits: TransferLimits(maximumBytes: 1, stallTimeout: .seconds(60))) as? TransferStalled)
        #expect(late.received == 20_000)
    }

    @Test func theRateIsNotJudgedBeforeTheHead() {
        var pace = Pace(now: start)
        for second in 1...30 { #expect(pace.failure(at: at(second), limits: limits) == nil, "second \(second)") }
    }

    @Test func aWindowBelowTheRateFailsOnceItIsWhole() throws {
        var pace = Pace(now: start)
        pace.headArrived(at: start)
        pace.arrived(5_000, at: at(1))
        for second in 1...9 {
            #expect(pace.failure(at: at(second), limits: limits) == nil, "second \(second): the window is not whole yet")
        }
        let slow = try #require(pace.failure(at: at(10), limits: limits) as? TransferTooSlow)
        #expect(slow.receivedInWindow == 5_000 && slow.minimum.bytesPerSecond == 1000)
    }

    @Test func theWindowSlidesWithTheTicks() throws {
        var pace = Pace(now: start)
        pace.headArrived(at: start)
        pace.arrived(10_000, at: at(1))
        for second in 1...10 { #expect(pace.failure(at: at(second), limits: limits) == nil, "second \(second)") }
        // At second 11 the window starts at second 1, when the only bytes had arrived.
        let slow = try #require(pace.failure(at: at(11), limits: limits) as? TransferTooSlow)
        #expect(slow.receivedInWindow == 0)
    }

    @Test func theWatchdogTicksATenthOfTheShortestLimit() {
        #expect(limits.watchdogTick == .seconds(1), "the 10 s window is shorter than the 60 s stall timeout")
        #expect(TransferLimits(maximumBytes: 1, stallTimeout: .seconds(30)).watchdogTick == .seconds(3))
        #expect(TransferLimits(maximumBytes: 1, stallTimeout: .milliseconds(50)).watchdogTick == .milliseconds(10), "never below 10 ms")
    }

    @Test func bytesPerWindowIsTheRateTimesTheWindow() {
        #expect(TransferRate(bytesPerSecond: 1024, window: .seconds(60)).bytesPerWindow == 61_440)
        #expect(TransferRate(bytesPerSecond: 1000, window: .milliseconds(1500)).bytesPerWindow == 1500)
    }
}
