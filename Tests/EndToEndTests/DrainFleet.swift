import Foundation
import Synchronization
import TestSupport

/// 24 devices on threads of their own, each on keep-alive connections through the raw test client
/// (or, `reconnecting`, a new connection for every request): a manifest check (a `304` or a
/// `200`) twice, then a 64 KiB range of a blob, over and over. A connection the server closes
/// before an answer's first byte is retried on a new one (as any HTTP client does); one refused
/// ends the device, and so does a new one closed before its answer once the server was signalled
/// (it was accepted as the listener closed).
final class DrainFleet: Sendable {
    struct Counts: Sendable {
        var answered = 0
        var failed = 0
        var retried = 0
        var refused = 0
        var afterSignal = 0
        /// The first ten failures, described.
        var failures: [String] = []
        /// The devices that have made 20 requests.
        var ready = 0
    }

    static let devices = 24
    let port: Int
    let appKey: String
    let blob: String
    let reconnecting: Bool
    let counts = Mutex(Counts())
    private let signalled = Mutex(false)
    private let allReady = DispatchSemaphore(value: 0)
    private let finished = DispatchGroup()

    init(port: Int, appKey: String, blob: String, reconnecting: Bool = false) {
        (self.port, self.appKey, self.blob, self.reconnecting) = (port, appKey, blob, reconnecting)
    }

    /// Starts the devices; once each has made 20 requests, calls `signal` (which makes the server
    /// drain), then waits at most 60 s for every device to end. The devices and the wait run on
    /// threads of their own, not on the test's.
    /// - Returns: `false` when the devices did not all get going within 30 s or did not end.
    func run(signal: @escaping @Sendable () -> Void) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: self.runOnThisThread(signal: signal)) }.start()
        }
    }

    private func runOnThisThread(signal: () -> Void) -> Bool {
        for number in 0..<Self.devices {
            finished.enter()
            Thread { [self] in
                device(number)
                finished.leave()
            }.start()
        }
        guard allReady.wait(timeout: .now() + 30) == .success else { return false }
        signalled.withLock { $0 = true }
        signal()
        return finished.wait(timeout: .now() + 60) == .success
    }

    private func device(_ number: Int) {
        var connection: RawHTTPConnection?
        var (etag, fresh, requests): (String?, Bool, Int) = (nil, true, 0)
        while true {
            guard let open = connection ?? (try? RawHTTPConnection(port: port, timeout: 30)) else {
                counts.withLock { $0.refused += 1 }
                return
            }
            if connection == nil { (connection, fresh) = (open, true) }
            let isBlob = requests % 3 == 0
            var fields = "Authorization: Bearer \(appKey)\r\nDepot-Installation-ID: device-\(number)\r\n"
            if isBlob {
                fields += "Range: bytes=\(number * 1_000)-\(number * 1_000 + 65_535)\r\n"
            } else if let etag, requests % 2 == 1 {
                fields += "If-None-Match: \(etag)\r\n"
            }
            let path = isBlob ? blob : "/v1/models/flowers/manifest"
            let answer: RawHTTPConnection.Answer?
            do {
                answer =
                    (try? open.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(fields)\r\n")) == nil
                    ? nil : try open.answerUnlessClosed()
            } catch {
                failed("\(path) cut mid-answer: \(error)")
                connection = nil
                continue
            }
            guard let answer else {
                if fresh, signalled.withLock({ $0 }) {
                    counts.withLock { $0.refused += 1 }
                    return
                }
                if fresh { failed("\(path) closed on a new connection") } else { counts.withLock { $0.retried += 1 } }
                connection = nil
                continue
            }
            let expected: [Int: Int?] = isBlob ? [206: 65_536] : [200: nil, 304: 0]
            if let size = expected[answer.status], size.map({ $0 == answer.body.count }) ?? true {
                let late = signalled.withLock { $0 }
                counts.withLock {
                    $0.answered += 1
                    if late { $0.afterSignal += 1 }
                }
            } else {
                failed("\(path): \(answer.status) with \(answer.body.count) bytes")
            }
            if !isBlob, answer.status == 200 { etag = answer.field("etag") }
            requests += 1
            fresh = false
            if requests == 20,
                counts.withLock({
                    $0.ready += 1
                    return $0.ready
                }) == Self.devices
            {
                allReady.signal()
            }
            if reconnecting || answer.field("connection")?.lowercased() == "close" { connection = nil }
        }
    }

    private func failed(_ description: String) {
        counts.withLock {
            $0.failed += 1
            if $0.failures.count < 10 { $0.failures.append(description) }
        }
    }
}
