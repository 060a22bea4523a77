import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// SIGTERM while 24 devices keep checking their manifest (a `304` or a `200`) and downloading
/// blob ranges on keep-alive connections: every request the server took is answered whole, the
/// server exits 0, and a device only ever meets a connection closed between two requests (which
/// any HTTP client retries on a new connection) or a closed listener.
@Suite struct DrainEndToEndTests {
    static let script = """
        import http.client, json, os, signal, sys, threading
        host, port, key, blob, server = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
        lock = threading.Lock()
        counts = {"answered": 0, "failed": 0, "retried": 0, "refused": 0, "after_signal": 0}
        failures = []
        ready = []
        started = threading.Event()
        signalled = threading.Event()
        def count(name, detail=None):
            with lock:
                counts[name] += 1
                if detail and len(failures) < 10:
                    failures.append(detail)
        def device(number):
            etag = None
            connection, fresh, requests = None, True, 0
            while True:
                if connection is None:
                    connection, fresh = http.client.HTTPConnection(host, port, timeout=30), True
                    try:
                        connection.connect()
                    except OSError:
                        count("refused")
                        return
                path = "/v1/models/flowers/manifest" if requests % 3 else blob
                headers = {"Authorization": "Bearer " + key, "Depot-Installation-ID": "device-%d" % number}
                if path == blob:
                    headers["Range"] = "bytes=%d-%d" % (number * 1000, number * 1000 + 65535)
                elif etag and requests % 2:
                    headers["If-None-Match"] = etag
                try:
                    connection.request("GET", path, headers=headers)
                    response = connection.getresponse()
                except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as error:
                    connection.close()
                    connection = None
                    if fresh:
                        count("failed", "%s on a new connection: %r" % (path, error))
                    else:
                        count("retried")
                    continue
                try:
                    body = response.read()
                except Exception as error:
                    count("failed", "%s cut mid-answer: %r" % (path, error))
                    connection.close()
                    connection = None
                    continue
                expected = {206: 65536} if path == blob else {200: None, 304: 0}
                if response.status not in expected or (expected[response.status] is not None and len(body) != expected[response.status]):
                    count("failed", "%s: %d with %d bytes" % (path, response.status, len(body)))
                else:
                    count("answered")
                    if signalled.is_set():
                        count("after_signal")
                if path != blob and response.status == 200:
                    etag = response.getheader("ETag")
                requests += 1
                fresh = False
                if requests == 20:
                    with lock:
                        ready.append(number)
                        if len(ready) == 24:
                            started.set()
                if response.getheader("Connection", "").lower() == "close":
                    connection.close()
                    connection = None
        threads = [threading.Thread(target=device, args=(n,)) for n in range(24)]
        for thread in threads:
            thread.start()
        if not started.wait(30):
            sys.exit("the devices never got going")
        signalled.set()
        os.kill(server, signal.SIGTERM)
        for thread in threads:
            thread.join(60)
        print(json.dumps({"counts": counts, "failures": failures}))
        """

    struct Outcome: Decodable {
        struct Counts: Decodable {
            let answered: Int
            let failed: Int
            let retried: Int
            let refused: Int
            let after_signal: Int
        }
        let counts: Counts
        let failures: [String]
    }

    @Test func sigtermUnderLoadAnswersEveryRequestItTook() throws {
        let scratch = try Scratch()
        let server = try ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        let version = try server.publishLargeModel(megabytes: 1, seed: 4, in: scratch)
        let appKey = try Command.depot(["keys", "create", "--app", "--json"], environment: server.environment).decode(CreatedAccessKey.self)
            .secret

        // The fleet sends the SIGTERM itself once every device has made 20 requests.
        let fleet = try Subprocess.run(
            "python3",
            [
                "-c", Self.script, server.url.host ?? "127.0.0.1", "\(server.url.port ?? 0)", appKey,
                "/v1/blobs/sha256/\(version.sha256)", "\(server.process.processIdentifier)",
            ])
        #expect(fleet.status == 0, "\(fleet.error)")
        #expect(server.process.waitForExit() == 0)
        let outcome = try fleet.decode(Outcome.self)
        #expect(outcome.counts.failed == 0, "\(outcome.failures)")
        #expect(outcome.counts.answered >= 24 * 20, "\(outcome.counts)")
        #expect(outcome.counts.after_signal >= 1, "requests in flight at the signal were answered: \(outcome.counts)")
        #expect(outcome.counts.refused >= 1, "the devices went on until the listener closed: \(outcome.counts)")
    }
}
