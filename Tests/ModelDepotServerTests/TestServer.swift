import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotShared
import TestSupport

@testable import ModelDepotServer

/// A server on a fresh storage directory, driven through Hummingbird's router tester. On
/// ``DepotBackend/postgresAndS3`` its catalog is a fresh database on the test PostgreSQL server
/// and its blobs are under a fresh prefix of the test S3 bucket.
struct TestServer {
    static let adminToken = "test-admin-token-0123456789"

    let storage: URL
    var configuration: ServerConfiguration

    init(_ backend: DepotBackend = .sqliteAndFiles, maximumUploadSize: Int = 1 << 30) async throws {
        storage = FileManager.default.temporaryDirectory.appendingPathComponent("depot-server-\(UUID().uuidString)")
        configuration = ServerConfiguration(
            port: 0, storageDirectory: storage.path, maximumUploadSize: maximumUploadSize,
            logLevel: .critical, initialAdminToken: Self.adminToken)
        // Guarded rollouts move only when a test asks for a review, never at the server's own
        // interval, which runs on the wall clock while the tests move theirs.
        configuration.guardReviewInterval = .seconds(86_400)
        // Patches are made only for the tests that turn them on: a patch landing changes the
        // manifests, which other tests compare across requests.
        configuration.patchSources = 0
        if let locations = try await backend.freshLocations() {
            configuration.database = locations.database
            configuration.objectStore = try S3Location(url: locations.objectStore, environment: locations.environment)
        }
    }

    /// Runs `body` against the router (or, `live`, a server on 127.0.0.1 through ``LiveClient``,
    /// which takes concurrent requests), then removes the storage directory.
    func run(live: Bool = false, _ body: @escaping @Sendable (Client) async throws -> Void) async throws {
        defer { try? FileManager.default.removeItem(at: storage) }
        let app = try await buildApplication(configuration)
        try await app.testShuttingDown(live ? .live : .router) { [configuration] tester in
            let send: Client.Send
            if live, let port = tester.port {
                send = LiveClient(port: port).execute
            } else {
                send = { method, uri, headers, body in
                    Response(try await tester.execute(uri: uri, method: method, headers: headers, body: body))
                }
            }
            try await body(Client(send: send, storage: storage, database: configuration.database, objectStore: configuration.objectStore))
        }
    }

    /// Requests with JSON helpers and the admin token by default.
    struct Client: Sendable {
        typealias Send = @Sendable (HTTPRequest.Method, String, HTTPFields, ByteBuffer?) async throws -> Response
        let send: Send
        let storage: URL
        /// The PostgreSQL catalog's URL, or `nil` for the SQLite file under `storage`.
        let database: String?
        /// The S3 bucket and prefix of the blobs, or `nil` for `storage/blobs`.
        let objectStore: S3Location?

        /// The ids of the online manifest keys the server keeps: its key files under `keys/`, or
        /// the rows of the shared catalog's `signing_key`.
        func storedSigningKeys() async throws -> [String] {
            if let database {
                return try await TestPostgres.query(database, "SELECT keyid FROM signing_key ORDER BY keyid").split(separator: "\n").map(
                    String.init)
            }
            return files(under: "keys").filter { $0.hasSuffix(".ed25519") }.map { String($0.dropLast(".ed25519".count)) }.sorted()
        }

        static let admin: HTTPFields = [.authorization: "Bearer \(TestServer.adminToken)"]

        @discardableResult
        func request(_ method: HTTPRequest.Method, _ uri: String, headers: HTTPFields = admin, body: ByteBuffer? = nil) async throws
            -> Response
        {
            try await send(method, uri, headers, body)
        }

        @discardableResult
        func json(_ method: HTTPRequest.Method, _ uri: String, _ value: some Encodable, headers: HTTPFields = admin) async throws
            -> Response
        {
            try await request(method, uri, headers: headers, body: ByteBuffer(bytes: try JSONEncoder().encode(value)))
        }

        func createModel(_ name: String) async throws {
            let response = try await json(.post, "/v1/admin/models", ModelCreation(name: try ModelName(name)))
            guard response.status == .created else { throw Failure("creating \(name): \(response.status) \(response.text)") }
        }

        func upload(_ fixture: String, to model: String, query: String = "publish=true", headers: HTTPFields = admin) async throws
            -> Response
        {
            try await request(
                .post, "/v1/admin/models/\(model)/versions?\(query)", headers: headers,
                body: ByteBuffer(bytes: try Fixtures.bytes(fixture)))
        }

        func appKey(models: [String]? = nil) async throws -> HTTPFields {
            let response = try await json(
                .post, "/v1/admin/keys",
                AccessKeyCreation(kind: .app, name: "test", models: try models?.map { try ModelName($0) }))
            let key = try response.decode(CreatedAccessKey.self)
            return [.authorization: "Bearer \(key.secret)"]
        }

        /// The digests of the blobs the server holds (under `storage/blobs`, or in the bucket).
        func storedBlobs() async throws -> [String] {
            guard let objectStore else { return files(under: "blobs") }
            let client = S3Client(location: objectStore)
            return try await client.list(prefix: objectStore.key("blobs/sha256/")).map { String($0.key.split(separator: "/").last ?? "") }
        }

        /// What unfinished uploads left behind: temporary files, or staged objects and multipart uploads.
        func uploadLeftovers() async throws -> [String] {
            guard let objectStore else { return files(under: "tmp") }
            let client = S3Client(location: objectStore)
            let staged = try await client.list(prefix: objectStore.key("uploads/")).map(\.key)
            return staged + (try await client.pendingUploads(prefix: objectStore.key("")).map { "multipart " + $0.key })
        }

        /// The names of the regular files under a storage subdirectory, recursively.
        private func files(under directory: String) -> [String] {
            let enumerator = FileManager.default.enumerator(
                at: storage.appendingPathComponent(directory),
                includingPropertiesForKeys: [.isRegularFileKey])
            return (enumerator?.allObjects as? [URL] ?? [])
                .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
                .map(\.lastPathComponent)
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

extension TestServer {
    /// An answer: its status, fields and whole body.
    struct Response: Sendable {
        var status: HTTPResponse.Status
        var headers: HTTPFields
        var body: ByteBuffer

        init(status: HTTPResponse.Status, headers: HTTPFields, body: ByteBuffer) {
            (self.status, self.headers, self.body) = (status, headers, body)
        }

        init(_ tested: TestResponse) {
            self.init(status: tested.status, headers: tested.headers, body: tested.body)
        }
    }
}

extension TestServer.Response {
    var text: String { String(buffer: body) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(T.self, from: Data(body.readableBytesView))
    }

    var error: DepotError? { try? decode(ErrorBody.self).error }

    /// The manifest inside a signed envelope, read without checking its signatures.
    func manifest() throws -> ModelManifest {
        let envelope = try decode(SignedEnvelope.self)
        guard let payload = Data(base64Encoded: envelope.payload) else { throw TestServer.Failure("the payload is not base64") }
        return try SignedJSON.decoder.decode(ModelManifest.self, from: payload)
    }
}

/// The committed TFLite fixtures.
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/tflite")

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(name + ".tflite")))
    }
}
