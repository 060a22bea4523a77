import NIOCore
import Testing

@testable import ModelDepotServer

/// The fast path's connection state alone: pipelined requests are looked at in order, a request
/// handed to the router takes its body with it and holds what follows until the router answers,
/// work under way holds the requests behind it up to a head's worth, and a batch being written
/// holds reads and the server's quiesce until it is answered.
@Suite struct FastPathConnectionTests {
    static func bytes(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    static let first = "GET /a HTTP/1.1\r\n\r\n"
    static let second = "GET /b HTTP/1.1\r\n\r\n"

    @Test func pipelinedRequestsAreLookedAtInOrder() {
        var connection = FastPathConnection()
        var step: FastPathConnection.Step
        var said: Bool
        connection.receive(Self.bytes(Self.first))
        connection.receive(Self.bytes(Self.second))
        step = connection.next(writable: true, duringRead: true)
        #expect(step == .look(Self.bytes(Self.first + Self.second)))
        connection.consume(Self.first.utf8.count)
        step = connection.next(writable: true, duringRead: true)
        #expect(step == .look(Self.bytes(Self.second)))
        connection.consume(Self.second.utf8.count)
        step = connection.next(writable: true, duringRead: true)
        #expect(step == .wait)
        said = connection.readComplete()
        #expect(!said, "nothing went to the decoder")
    }

    @Test func aHandedRequestTakesItsBodyAndHoldsWhatFollowsUntilTheRouterAnswers() {
        var connection = FastPathConnection()
        var step: FastPathConnection.Step
        var said: Bool
        connection.receive(Self.bytes("POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\n12345"))
        let head = "POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\n".utf8.count
        connection.hand(head + 10)
        #expect(
            connection.next(writable: true, duringRead: true)
                == .handOn(Self.bytes("POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\n12345"), readComplete: false))
        step = connection.next(writable: true, duringRead: true)
        #expect(step == .wait)
        said = connection.readComplete()
        #expect(said, "the read's end follows what was handed on")
        said = connection.readComplete()
        #expect(!said)

        connection.receive(Self.bytes("67890" + Self.second))
        step = connection.next(writable: true, duringRead: false)
        #expect(step == .handOn(Self.bytes("67890"), readComplete: true))
        #expect(connection.mode == .awaitingRouter)
        step = connection.next(writable: true, duringRead: false)
        #expect(step == .wait, "the next request waits for the router's answer")
        said = connection.routerAnswered()
        #expect(said)
        step = connection.next(writable: true, duringRead: false)
        #expect(step == .look(Self.bytes(Self.second)))
    }

    @Test func anAnswerBeforeTheBodyEndsLetsTheNextRequestBeAnsweredHereOnceTheBodyIsThrough() {
        var connection = FastPathConnection()
        var step: FastPathConnection.Step
        var said: Bool
        connection.receive(Self.bytes("POST /x HTTP/1.1\r\nContent-Length: 4\r\n\r\n"))
        connection.hand("POST /x HTTP/1.1\r\nContent-Length: 4\r\n\r\n".utf8.count + 4)
        _ = connection.next(writable: true, duringRead: true)
        said = connection.routerAnswered()
        #expect(!said, "the body is still on its way")
        connection.receive(Self.bytes("abcd" + Self.first))
        step = connection.next(writable: true, duringRead: true)
        #expect(step == .handOn(Self.bytes("abcd"), readComplete: false))
        step = connection.next(writable: true, duringRead: true)
        #expect(step == .look(Self.bytes(Self.first)))
    }

    @Test func workUnderWayHoldsRequestsUpToAHeadsWorthThenTheRouterTakesThem() {
        var connection = FastPathConnection()
        var step: FastPathConnection.Step
        var said: Bool
        connection.begin(.file)
        connection.receive(Self.bytes(Self.first))
        step = connection.next(writable: true, duringRead: true)
        #expect(step == .wait)
        let flood = String(repeating: "x", count: FastPathRequestHead.maxLength)
        connection.receive(Self.bytes(flood))
        step = connection.next(writable: true, duringRead: true)
        #expect(step == .handOn(Self.bytes(Self.first + flood), readComplete: false))
        #expect(connection.mode == .passing)
        said = connection.readComplete()
        #expect(said)
        connection.receive(Self.bytes(Self.second))
        step = connection.next(writable: true, duringRead: false)
        #expect(step == .handOn(Self.bytes(Self.second), readComplete: true))
    }

    @Test func aChannelThatTakesNoWritesIsNotAnsweredUntilItDoes() {
        var connection = FastPathConnection()
        var step: FastPathConnection.Step
        connection.receive(Self.bytes(Self.first))
        step = connection.next(writable: false, duringRead: true)
        #expect(step == .wait)
        step = connection.next(writable: true, duringRead: false)
        #expect(step == .look(Self.bytes(Self.first)))
    }

    @Test func aBatchBeingWrittenHoldsReadsAndTheQuiesceAndKeepsItsBytesFromTheRouter() {
        var connection = FastPathConnection()
        var step: FastPathConnection.Step
        var said: Bool
        var held: (read: Bool, quiesce: Bool)
        let batch = "POST /v1/models/m/events HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"
        connection.receive(Self.bytes(batch))
        step = connection.next(writable: true, duringRead: true)
        #expect(step == .look(Self.bytes(batch)))
        connection.begin(.batch)
        said = connection.read()
        #expect(said, "little waits behind the batch")
        connection.receive(Self.bytes(String(repeating: "x", count: FastPathRequestHead.maxLength + 1)))
        step = connection.next(writable: true, duringRead: true)
        #expect(step == .wait, "never to the router while the batch is written")
        said = connection.read()
        #expect(!said)
        said = connection.quiesce()
        #expect(!said)
        #expect(connection.mode == .answering)

        held = connection.batchDone()
        #expect(held.read && held.quiesce)
        held = connection.batchDone()
        #expect(held == (read: false, quiesce: false), "held once")
        connection.consume(batch.utf8.count)
        said = connection.quiesce()
        #expect(said)
        guard case .handOn(let rest, readComplete: true) = connection.next(writable: true, duringRead: false) else {
            Issue.record("the quiesce hands what waits to the router")
            return
        }
        #expect(rest.readableBytes == FastPathRequestHead.maxLength + 1)
    }

    @Test func aRequestWaitingForTheRouterPastAHeadsWorthGivesTheConnectionToTheRouter() {
        var connection = FastPathConnection()
        var said: Bool
        connection.receive(Self.bytes(Self.first))
        connection.hand(Self.first.utf8.count)
        _ = connection.next(writable: true, duringRead: true)
        #expect(connection.mode == .awaitingRouter)
        connection.receive(Self.bytes(String(repeating: "y", count: FastPathRequestHead.maxLength + 1)))
        guard case .handOn(let all, _) = connection.next(writable: true, duringRead: true) else {
            Issue.record("more than a head's worth goes to the router")
            return
        }
        #expect(all.readableBytes == FastPathRequestHead.maxLength + 1 && connection.mode == .passing)
        said = connection.routerAnswered()
        #expect(!said, "the connection stays with the router")
    }

    /// Requests that arrived with the end of a handed request's body wait for the router's answer,
    /// however many: only a later read past a head's worth gives the connection to the router.
    @Test func requestsArrivingWithTheEndOfAHandedBodyWaitForTheRoutersAnswer() {
        var connection = FastPathConnection()
        var step: FastPathConnection.Step
        let head = "POST /x HTTP/1.1\r\nContent-Length: 2\r\n\r\n"
        let pipelined = String(repeating: Self.first, count: FastPathRequestHead.maxLength / Self.first.utf8.count + 1)
        connection.receive(Self.bytes(head + "ab" + pipelined))
        connection.hand(head.utf8.count + 2)
        step = connection.next(writable: true, duringRead: true)
        #expect(step == .handOn(Self.bytes(head + "ab"), readComplete: false))
        step = connection.next(writable: true, duringRead: true)
        #expect(step == .wait)
        #expect(connection.mode == .awaitingRouter)
        let answeredHere = connection.routerAnswered()
        #expect(answeredHere)
        step = connection.next(writable: true, duringRead: false)
        #expect(step == .look(Self.bytes(pipelined)))
    }

    @Test func aClosedConnectionDropsWhatWaited() {
        var connection = FastPathConnection()
        var step: FastPathConnection.Step
        connection.receive(Self.bytes(Self.first))
        connection.closed()
        step = connection.next(writable: true, duringRead: false)
        #expect(step == .wait)
    }
}
