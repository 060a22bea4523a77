import Crypto
import Foundation
import ModelDepotShared

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The CLI's side of the admin API, over URLSession. Every failure is a ``DepotError``: the
/// server's own error, or `unavailable` when the server cannot be reached.
struct AdminClient: Sendable {
    let server: URL
    let token: String
    let session: URLSession = URLSession(configuration: .ephemeral)

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    func get<T: Decodable>(_ path: String, as type: T.Type = T.self) async throws -> T {
        try decode(try await send(request("GET", path)))
    }

    func put<T: Decodable>(_ path: String, json body: some Encodable, as type: T.Type = T.self) async throws -> T {
        try await send(json: body, method: "PUT", path)
    }

    func post<T: Decodable>(_ path: String, json body: some Encodable, as type: T.Type = T.self) async throws -> T {
        try await send(json: body, method: "POST", path)
    }

    private func send<T: Decodable>(json body: some Encodable, method: String, _ path: String) async throws -> T {
        var request = request(method, path)
        request.httpBody = try JSONEncoder().encode(body)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        return try decode(try await send(request))
    }

    func post<T: Decodable>(_ path: String, as type: T.Type = T.self) async throws -> T {
        try decode(try await send(request("POST", path)))
    }

    /// The body of a GET as is (a signed document, whose bytes matter).
    func data(_ path: String) async throws -> Data {
        try await send(request("GET", path))
    }

    /// POSTs bytes as they are (a signed document).
    func post<T: Decodable>(_ path: String, body: Data, as type: T.Type = T.self) async throws -> T {
        var request = request("POST", path)
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        return try decode(try await send(request))
    }

    func delete(_ path: String) async throws {
        _ = try await send(request("DELETE", path))
    }

    func delete<T: Decodable>(_ path: String, as type: T.Type) async throws -> T {
        try decode(try await send(request("DELETE", path)))
    }

    /// Streams a file as the body of a POST with its SHA-256 (`Depot-Content-SHA256`), reporting
    /// bytes sent. Over ``SocketUpload`` the digest is computed while the file goes out and follows
    /// it as a trailer; over URLSession it is computed first and sent as a header.
    func upload<T: Decodable>(
        _ path: String, file: String, companions: [CompanionUpload] = [], as type: T.Type = T.self,
        progress: @escaping @Sendable (Int64, Int64) -> Void
    ) async throws -> T {
        var request = request("POST", path)
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        #if os(Linux)
            if let url = request.url, SocketUpload.isAvailable(for: url) {
                var upload = SocketUpload(url: url, headers: request.allHTTPHeaderFields ?? [:], file: file, companions: companions)
                var (status, body, digest) = try upload.transfer(progress: progress)
                // A proxy on the way (nginx, for one) dropped the trailer: send again, with the digest
                // computed during the first attempt as a header.
                if status == 400, let digest, (try? JSONDecoder().decode(ErrorBody.self, from: body))?.error.code == .trailerMissing {
                    upload.digest = digest
                    (status, body, _) = try upload.transfer(progress: progress)
                }
                return try decode(
                    try check(body, HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: nil)!))
            }
        #endif
        request.setValue(try SHA256.digest(ofFileAt: file).hex, forHTTPHeaderField: DepotHeader.contentSHA256)
        let body = try companions.isEmpty ? nil : ConcatenatedBody(model: file, companions: companions)
        defer { body?.remove() }
        if let body {
            request.setValue(String(body.modelSize), forHTTPHeaderField: DepotHeader.contentLength)
            request.setValue(CompanionFile.header(companions.map(\.file)), forHTTPHeaderField: DepotHeader.companionFiles)
        }
        let bodyFile = body?.path ?? file
        let (data, response): (Data, URLResponse)
        do {
            (data, response) = try await withCheckedThrowingContinuation { continuation in
                let delegate = UploadDelegate(progress: progress, continuation: continuation)
                let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
                session.uploadTask(with: request, fromFile: URL(fileURLWithPath: bodyFile)).resume()
                session.finishTasksAndInvalidate()
            }
        } catch {
            throw unreachable(error)
        }
        return try decode(try check(data, response))
    }

    private func request(_ method: String, _ path: String) -> URLRequest {
        var request = URLRequest(url: URL(string: path, relativeTo: server)!.absoluteURL)
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.timeoutInterval = 3600
        return request
    }

    private func send(_ request: URLRequest) async throws -> Data {
        let (data, response): (Data, URLResponse)
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw unreachable(error)
        }
        return try check(data, response)
    }

    private func check(_ data: Data, _ response: URLResponse) throws -> Data {
        guard let http = response as? HTTPURLResponse else {
            throw DepotError(.unavailable, "The server at \(server.absoluteString) did not answer over HTTP.")
        }
        guard (200..<300).contains(http.statusCode) else {
            if let body = try? JSONDecoder().decode(ErrorBody.self, from: data) { throw body.error }
            throw DepotError(
                http.statusCode >= 500 ? .unavailable : .badRequest,
                "The server at \(server.absoluteString) answered \(http.statusCode) without an error body; is this a ModelDepot server?")
        }
        return data
    }

    private func decode<T: Decodable>(_ data: Data) throws -> T {
        do {
            return try Self.decoder.decode(T.self, from: data)
        } catch {
            throw DepotError(
                .unavailable,
                "The server at \(server.absoluteString) answered something this CLI cannot read (\(error)); are the CLI and server versions the same?"
            )
        }
    }

    func unreachable(_ error: any Error) -> DepotError {
        DepotError(
            .unavailable,
            "Could not reach the server at \(server.absoluteString): \(error.localizedDescription). Check --server (or DEPOT_SERVER) and that 'depot serve' is running."
        )
    }
}

/// Collects an upload's answer and reports progress from URLSession's delegate callbacks.
final class UploadDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession calls a delegate on its own serial queue, one callback at a time;
    // `received` and `response` are touched only there.
    private let progress: @Sendable (Int64, Int64) -> Void
    private let continuation: CheckedContinuation<(Data, URLResponse), any Error>
    private var received = Data()
    private var response: URLResponse?

    init(progress: @escaping @Sendable (Int64, Int64) -> Void, continuation: CheckedContinuation<(Data, URLResponse), any Error>) {
        self.progress = progress
        self.continuation = continuation
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64, totalBytesExpectedToSend: Int64
    ) {
        progress(totalBytesSent, totalBytesExpectedToSend)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        self.response = response
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        received.append(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let response = response ?? task.response {
            continuation.resume(returning: (received, response))
        } else {
            continuation.resume(throwing: error ?? URLError(.badServerResponse))
        }
    }
}
