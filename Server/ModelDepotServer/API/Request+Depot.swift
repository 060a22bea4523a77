import Foundation
import HTTPTypes
import Hummingbird
import ModelDepotShared

extension AppRequestContext {
    /// The `{name}` path parameter as a valid model name (400 otherwise).
    func modelName() throws -> ModelName {
        try ModelName(parameters.get("name") ?? "")
    }

    /// The `{number}` path parameter as a version number (400 otherwise).
    func versionNumber() throws -> Int {
        let text = parameters.get("number") ?? ""
        guard let number = Int(text), number >= 1 else {
            throw DepotError(.badRequest, "'\(text.prefix(40))' is not a version number; versions are numbered 1, 2, 3, …")
        }
        return number
    }
}

extension Request {
    /// Decodes a JSON body of at most `limit` bytes (64 KiB unless given), with a 400 that says what is wrong.
    func decodeJSON<T: Decodable>(_ type: T.Type, context: AppRequestContext, limit: Int = 64 << 10) async throws -> T {
        try JSONBody.decode(type, from: try await collectBody(upTo: limit))
    }

    /// The body, at most `limit` bytes (413 otherwise).
    func collectBody(upTo limit: Int) async throws -> ByteBuffer {
        do {
            return try await body.collect(upTo: limit)
        } catch {
            throw DepotError(.payloadTooLarge, "The JSON body is larger than \(limit >> 10) KiB.")
        }
    }
}

/// JSON responses with the status the route wants.
struct JSONResponse {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }
}
