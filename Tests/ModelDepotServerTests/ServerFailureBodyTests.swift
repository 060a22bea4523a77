import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotShared
import Testing

@testable import ModelDepotServer

/// Every 5xx body, on the API and the console, names only its code, a public message and the
/// request id; the cause (hosts, buckets, keys, paths) stays in the log.
@Suite struct ServerFailureBodyTests {
    static let secret = "postgres://depot@db.internal:5432 s3://models-bucket/blobs/sha256/ab /srv/depot/storage/depot.sqlite"

    static let failures: [(code: DepotError.Code, status: Int, says: String)] = [
        (.internalError, 500, "failed to answer"), (.fileUnreadable, 500, "failed to answer"),
        (.unavailable, 503, "cannot reach its catalog database or object store"), (.insufficientStorage, 507, "no room left"),
    ]

    static func router() -> Router<AppRequestContext> {
        let router = Router(context: AppRequestContext.self)
        let log = RequestLog(isEnabled: false)
        router.add(middleware: RequestLogMiddleware(metrics: ServerMetrics(requestLog: log), log: log))
        router.get("v1/fail/:code") { _, context -> Response in
            throw DepotError(try #require(DepotError.Code(rawValue: context.parameters.get("code") ?? "")), Self.secret)
        }
        router.get("v1/crash") { _, _ -> Response in throw CocoaError(.fileReadNoPermission, userInfo: [NSFilePathErrorKey: Self.secret]) }
        router.get("v1/refused") { _, _ -> Response in throw DepotError(.notFound, "No model named 'flowers'.") }
        let console = router.group("console").add(middleware: ConsoleHeadersMiddleware())
        console.get("fail/:code") { _, context -> Response in
            throw DepotError(try #require(DepotError.Code(rawValue: context.parameters.get("code") ?? "")), Self.secret)
        }
        return router
    }

    @Test(arguments: ["/v1/fail/", "/console/fail/"], failures.map(\.code.rawValue))
    func aServerFailureBodyHidesItsCause(prefix: String, code: String) async throws {
        let expected = try #require(Self.failures.first { $0.code.rawValue == code })
        try await Application(router: Self.router()).test(.router) { client in
            let response = try await client.execute(uri: prefix + code, method: .get)
            #expect(Int(response.status.code) == expected.status)
            let body = try JSONDecoder().decode(ErrorBody.self, from: Data(buffer: response.body))
            let requestID = try #require(response.headers[HTTPField.Name(DepotHeader.requestID)!])
            #expect(body.error.code.rawValue == code)
            #expect(body.error.message.contains(expected.says))
            #expect(body.error.message.contains("request id \(requestID)"))
            #expect(
                !String(buffer: response.body).contains("db.internal") && !String(buffer: response.body).contains("models-bucket")
                    && !String(buffer: response.body).contains("/srv/depot"), "\(String(buffer: response.body))")
        }
    }

    @Test func anErrorThatIsNoDepotErrorIsAnInternalErrorWithoutItsText() async throws {
        try await Application(router: Self.router()).test(.router) { client in
            let response = try await client.execute(uri: "/v1/crash", method: .get)
            #expect(response.status == .internalServerError)
            let body = try JSONDecoder().decode(ErrorBody.self, from: Data(buffer: response.body))
            #expect(body.error.code == .internalError)
            #expect(!String(buffer: response.body).contains("/srv/depot"))
        }
    }

    /// The response encoder decides the body, not a middleware: a route outside the request log
    /// hides a failure's message and cause as well.
    @Test func aServerFailureIsHiddenWithoutTheRequestLogToo() async throws {
        let router = Router(context: AppRequestContext.self)
        router.get("bare") { _, _ -> Response in
            throw DepotError(.internalError, "Could not open '/srv/depot/storage'.", cause: Self.secret)
        }
        try await Application(router: router).test(.router) { client in
            let response = try await client.execute(uri: "/bare", method: .get)
            #expect(response.status == .internalServerError)
            let body = try JSONDecoder().decode(ErrorBody.self, from: Data(buffer: response.body))
            let requestID = try #require(response.headers[HTTPField.Name(DepotHeader.requestID)!])
            #expect(body.error.code == .internalError && body.error.message.contains("request id \(requestID)"))
            #expect(!String(buffer: response.body).contains("/srv/depot") && !String(buffer: response.body).contains("db.internal"))
        }
    }

    @Test func aClientErrorKeepsItsMessage() async throws {
        try await Application(router: Self.router()).test(.router) { client in
            let response = try await client.execute(uri: "/v1/refused", method: .get)
            #expect(response.status == .notFound)
            let body = try JSONDecoder().decode(ErrorBody.self, from: Data(buffer: response.body))
            #expect(body.error.code == .notFound && body.error.message == "No model named 'flowers'.")
            #expect(response.headers[HTTPField.Name(DepotHeader.requestID)!] == nil)
        }
    }
}
