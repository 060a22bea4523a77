import AsyncHTTPClient
import HTTPTypes
import NIOCore
import NIOHTTP1

/// Requests to a live test server through AsyncHTTPClient, each within `deadline`: Hummingbird's
/// own live clients give every request 15 or 20 s, which a guard review of thousands of devices
/// can exceed while the rest of the test run keeps both cores busy; 120 s still tells a stuck
/// server.
struct LiveClient: Sendable {
    let port: Int
    var deadline: TimeAmount = .seconds(120)

    func execute(_ method: HTTPRequest.Method, _ uri: String, headers: HTTPFields, body: ByteBuffer?) async throws -> TestServer.Response {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(uri)")
        request.method = HTTPMethod(rawValue: method.rawValue)
        request.headers = HTTPHeaders(headers.map { ($0.name.rawName, $0.value) })
        request.body = body.map { .bytes($0) }
        let response = try await HTTPClient.shared.execute(request, deadline: .now() + deadline)
        var fields = HTTPFields()
        for (name, value) in response.headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        return TestServer.Response(
            status: HTTPResponse.Status(code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase), headers: fields,
            body: try await response.body.collect(upTo: .max))
    }
}
