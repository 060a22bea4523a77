import Crypto
import Foundation
import HTTPTypes
import ModelDepot
import ModelDepotShared
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where blobs may come from: the server's origin and the origins the app allows, redirects
/// followed by the SDK itself, the app key only to the server.
extension UpdateSecurityEndToEndTests {
    @Test func aStolenKeyCannotSendTheDeviceToAnotherOrigin() async throws {
        try await withDevice { device in
            let v2 = try await device.publish("float_classifier_labels")
            let real = try await device.recordManifest()
            let stolen = try device.stolenKey(thatSigned: real.body)
            // The same proxy under another name is another origin.
            let elsewhere = "/elsewhere/sha256/\(v2.sha256)"
            device.proxy.take(
                elsewhere,
                .upstream(
                    path: "/v1/blobs/sha256/\(v2.sha256)",
                    adding: ["Authorization": "Bearer \(device.published.appKey)"]))
            device.serveManifest(
                try forge(real.body, signers: [stolen]) {
                    $0.downloadURL = "http://localhost:\(device.proxy.url.port ?? 0)\(elsewhere)"
                })
            try await expectRefused(device, .originNotAllowed, keeping: 1, saying: "http://localhost:\(device.proxy.url.port ?? 0)")
            #expect(device.proxy.lastHeaders(device.manifestPath) != nil, "the forged manifest was delivered")
            #expect(device.proxy.lastHeaders(elsewhere) == nil, "the device fetched from an origin it does not allow")

            // An app that allows that origin downloads from it, without its key.
            let allowing = try device.downloader {
                $0.allowedDownloadOrigins = [URL(string: "http://localhost:\(device.proxy.url.port ?? 0)")!]
            }
            #expect(try await allowing.model(named: "flowers").sha256 == v2.sha256)
            let headers = try #require(device.proxy.lastHeaders(elsewhere))
            #expect(headers[.authorization] == nil, "the app key was sent to another origin")
            #expect(headers[HTTPField.Name("Depot-Arm")!] == nil && headers[.ifRange] == nil)
            #expect(headers[.range] != nil)
            #expect(device.proxy.lastHeaders(device.manifestPath)?[.authorization] == "Bearer \(device.published.appKey)")
        }
    }

    @Test func aDownloadURLMustBeHTTPAndNameTheManifestsDigest() async throws {
        try await withDevice { device in
            let v2 = try await device.publish("float_classifier_labels")
            let real = try await device.recordManifest()
            let stolen = try device.stolenKey(thatSigned: real.body)
            let other = String(repeating: "0", count: 64)
            device.serveManifest(try forge(real.body, signers: [stolen]) { $0.downloadURL = "/v1/blobs/sha256/\(other)" })
            try await expectRefused(device, .invalidMetadata, keeping: 1, saying: "does not name its SHA-256 \(v2.sha256)")
            #expect(device.proxy.lastHeaders("/v1/blobs/sha256/\(other)") == nil)

            device.serveManifest(try forge(real.body, signers: [stolen]) { $0.downloadURL = "file:///etc/sha256/\(v2.sha256)" })
            try await expectRefused(device, .invalidMetadata, keeping: 1, saying: "which is not an http(s) URL")
        }
    }

    @Test func aRedirectLoopStopsAtTheMaximum() async throws {
        try await withDevice { device in
            let v2 = try await device.publish("float_classifier_labels")
            let blob = "/v1/blobs/sha256/\(v2.sha256)"
            device.proxy.take(blob, .response(status: .found, headers: ["Location": blob], body: Data()))
            try await expectRefused(device, .unavailable, keeping: 1, saying: "was redirected more than 5 times (maximumRedirects)")
            #expect(device.proxy.lastHeaders(blob) != nil, "the redirect was delivered")
            device.proxy.take(blob, .response(status: .found, headers: [:], body: Data()))
            try await expectRefused(device, .unavailable, keeping: 1, saying: "without a Location to follow")
        }
    }

    @Test func redirectsAreFollowedOnlyToAllowedOriginsAndWithoutTheAppKey() async throws {
        try await withDevice { device in
            let v2 = try await device.publish("float_classifier_labels")
            let blob = "/v1/blobs/sha256/\(v2.sha256)"
            let cdnOrigin = "http://localhost:\(device.proxy.url.port ?? 0)"
            let cdn = "/cdn/sha256/\(v2.sha256)"
            device.proxy.take(blob, .response(status: .found, headers: ["Location": cdnOrigin + cdn], body: Data()))
            device.proxy.take(cdn, .upstream(path: blob, adding: ["Authorization": "Bearer \(device.published.appKey)"]))
            try await expectRefused(device, .originNotAllowed, keeping: 1, saying: "A redirect of the download")
            #expect(device.proxy.lastHeaders(blob) != nil, "the redirect was delivered")
            #expect(device.proxy.lastHeaders(cdn) == nil, "the redirect to an origin the app does not allow was followed")

            let allowing = try device.downloader {
                $0.allowedDownloadOrigins = [URL(string: cdnOrigin)!]
                $0.downloadChunkSize = 400
            }
            let model = try await allowing.model(named: "flowers")
            #expect(model.version == 2 && model.sha256 == v2.sha256)
            let headers = try #require(device.proxy.lastHeaders(cdn))
            #expect(headers[.authorization] == nil, "the redirect carried the app key to another origin")
            #expect(headers[.range] == "bytes=800-\(v2.size - 1)", "every range went through the redirect")
            #expect(device.proxy.lastHeaders(blob)?[.authorization] == "Bearer \(device.published.appKey)")
        }
    }

    @Test func aRedirectFromHTTPSToHTTPIsNeverFollowed() async throws {
        try await withDevice { device in
            let v2 = try await device.publish("float_classifier_labels")
            let port = device.proxy.url.port ?? 0
            let blob = "/v1/blobs/sha256/\(v2.sha256)"
            let plain = "/plain/sha256/\(v2.sha256)"
            device.proxy.take(
                blob, .response(status: .temporaryRedirect, headers: ["Location": "http://127.0.0.1:\(port)\(plain)"], body: Data()))
            device.proxy.take(plain, .upstream(path: blob, adding: ["Authorization": "Bearer \(device.published.appKey)"]))
            // Even with the http origin allowed, a downgrade from https is refused.
            let secure = try device.downloader {
                $0.serverURL = URL(string: "https://127.0.0.1:\(port)")!
                $0.transport = TLSStandIn()
                $0.allowedDownloadOrigins = [URL(string: "http://127.0.0.1:\(port)")!]
            }
            try await expectRefused(device, .insecureRedirect, keeping: 1, saying: "from https to http", using: secure)
            #expect(device.proxy.lastHeaders(blob) != nil, "the redirect was delivered")
            #expect(device.proxy.lastHeaders(plain) == nil, "the device followed a redirect from https to http")
        }
    }

    @Test func aModelLargerThanTheAppAcceptsIsRefusedBeforeAnyByte() async throws {
        try await withDevice { device in
            let v2 = try await device.publish("float_classifier_labels")
            let blob = "/v1/blobs/sha256/\(v2.sha256)"
            let small = try device.downloader { $0.maximumModelSize = v2.size - 1 }
            try await expectRefused(
                device, .modelTooLarge, keeping: 1, saying: "\(v2.size) bytes, more than the \(v2.size - 1)", using: small)

            let real = try await device.recordManifest()
            device.serveManifest(try forge(real.body, signers: [try device.stolenKey(thatSigned: real.body)]) { $0.size = 100 << 30 })
            try await expectRefused(device, .modelTooLarge, keeping: 1, saying: "maximumModelSize")
            #expect(device.proxy.lastHeaders(blob) == nil, "a byte of the blob was asked for")
        }
    }

    @Test func aWholeFileInsteadOfARangeIsAcceptedAndAnOversizedOneRefused() async throws {
        try await withDevice { device in
            let v2 = try await device.publish("float_classifier_labels")
            let blob = "/v1/blobs/sha256/\(v2.sha256)"
            let file = try Data(contentsOf: URL(fileURLWithPath: Binaries.fixture("float_classifier_labels")))
            device.proxy.take(blob, .response(status: .ok, headers: [:], body: file + file))
            try await expectRefused(device, .sizeMismatch, keeping: 1, saying: "announces \(2 * v2.size) bytes where \(v2.size) belong")

            device.proxy.take(blob, .response(status: .ok, headers: [:], body: file))
            let chunked = try device.downloader { $0.downloadChunkSize = 400 }
            #expect(try await chunked.model(named: "flowers").sha256 == v2.sha256)
            #expect(device.proxy.lastHeaders(blob)?[.range] == "bytes=0-399", "the device asked for a range and got the whole file")
        }
    }
}

/// Stands in for TLS, which cannot be real here (FoundationNetworking on Linux trusts only the
/// system's certificate store): a request to `https://host:port` goes to `http://host:port`
/// through the real URLSession transport, as if a TLS terminator sat in front of the proxy.
struct TLSStandIn: ModelTransport {
    let real = URLSessionTransport()

    func data(for request: URLRequest, limits: TransferLimits) async throws -> (Data, HTTPURLResponse) {
        try await real.data(for: plain(request), limits: limits)
    }

    func download(_ request: URLRequest, limits: TransferLimits) async throws -> (URL, HTTPURLResponse) {
        try await real.download(plain(request), limits: limits)
    }

    private func plain(_ request: URLRequest) -> URLRequest {
        guard let url = request.url, url.scheme == "https", var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return request
        }
        components.scheme = "http"
        var plain = request
        plain.url = components.url
        return plain
    }
}
