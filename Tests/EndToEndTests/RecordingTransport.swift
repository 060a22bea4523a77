import Foundation
import ModelDepot
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The platform's real transport, with a record of what the SDK handed it: each request and the
/// limits it came with (the networks it may use), as a transport sees them.
final class RecordingTransport: ModelTransport {
    struct Call: Sendable {
        var request: URLRequest
        var network: NetworkAccess
        var isDownload: Bool
    }

    let real = defaultModelTransport()
    let calls = Mutex<[Call]>([])
    /// Called before each download is handed on (a test's hook into the moment a range starts).
    let beforeDownload: @Sendable (URLRequest) -> Void

    init(beforeDownload: @escaping @Sendable (URLRequest) -> Void = { _ in }) { self.beforeDownload = beforeDownload }

    func data(for request: URLRequest, limits: TransferLimits) async throws -> (Data, HTTPURLResponse) {
        calls.withLock { $0.append(Call(request: request, network: limits.network, isDownload: false)) }
        return try await real.data(for: request, limits: limits)
    }

    func download(_ request: URLRequest, limits: TransferLimits) async throws -> (URL, HTTPURLResponse) {
        calls.withLock { $0.append(Call(request: request, network: limits.network, isDownload: true)) }
        beforeDownload(request)
        return try await real.download(request, limits: limits)
    }

    /// The first byte of each range downloaded, in order.
    var rangeStarts: [Int] {
        calls.withLock { calls in
            calls.filter(\.isDownload).compactMap { $0.request.value(forHTTPHeaderField: "Range") }
                .compactMap { Int($0.dropFirst("bytes=".count).prefix { $0 != "-" }) }
        }
    }
}
