import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// SIGTERM while 24 devices keep checking their manifest (a `304` or a `200`) and downloading
/// blob ranges: every request the server took is answered whole, the server exits 0, and a device
/// only ever meets a connection closed between two requests (which any HTTP client retries on a
/// new connection) or a closed listener.
@Suite struct DrainEndToEndTests {
    /// A server with a 1 MB model and an app key, and the devices of ``DrainFleet`` for it.
    static func serverAndFleet(reconnecting: Bool) async throws -> (Scratch, ServerProcess, DrainFleet) {
        let scratch = try Scratch()
        let server = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        let version = try await server.publishLargeModel(megabytes: 1, seed: 4, in: scratch)
        let appKey = try await Command.depot(["keys", "create", "--app", "--json"], environment: server.environment).decode(
            CreatedAccessKey.self
        )
        .secret
        let fleet = DrainFleet(
            port: server.url.port ?? 0, appKey: appKey, blob: "/v1/blobs/sha256/\(version.sha256)", reconnecting: reconnecting)
        return (scratch, server, fleet)
    }

    @Test func sigtermUnderLoadAnswersEveryRequestItTook() async throws {
        let (scratch, server, fleet) = try await Self.serverAndFleet(reconnecting: false)
        defer { withExtendedLifetime(scratch) {} }
        // SIGTERM once every device has made 20 requests.
        #expect(await fleet.run { server.process.send(SIGTERM) }, "the devices got going and ended")
        #expect(try await server.process.exit() == 0)
        let counts = fleet.counts.withLock { $0 }
        #expect(counts.failed == 0, "\(counts.failures)")
        #expect(counts.answered >= 24 * 20, "\(counts)")
        #expect(counts.afterSignal >= 1, "requests in flight at the signal were answered: \(counts)")
        #expect(counts.refused >= 1, "the devices went on until the listener closed: \(counts)")
    }

    /// The devices open a new connection for every request, as clients without keep-alive do, so
    /// that some connections are accepted just as the listener closes. The server closes those
    /// before reading from them; made active, NIO trapped on them and the server ended with
    /// signal 4 (in 5 of 8 rounds with one client of 6 threads). Three rounds, each a new server.
    @Test func sigtermWhileNewConnectionsArriveExitsZero() async throws {
        for round in 1...3 {
            let (scratch, server, fleet) = try await Self.serverAndFleet(reconnecting: true)
            defer { withExtendedLifetime(scratch) {} }
            #expect(await fleet.run { server.process.send(SIGTERM) }, "round \(round): the devices got going and ended")
            #expect(try await server.process.exit() == 0, "round \(round)")
            let counts = fleet.counts.withLock { $0 }
            #expect(counts.failed == 0, "round \(round): \(counts.failures)")
            #expect(counts.answered >= 24 * 20, "round \(round): \(counts)")
            #expect(counts.refused == DrainFleet.devices, "round \(round): every device went on until the listener closed: \(counts)")
        }
    }
}
