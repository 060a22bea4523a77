import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Which networks a transfer may use: carried by every download request (``TransferLimits/network``)
/// so that the system enforces the conditions too. On Apple platforms a transfer that meets a
/// network it may not use stops there; the partial file stays and the download resumes once the
/// conditions hold again.
public struct NetworkAccess: Sendable, Hashable {
    /// Cellular interfaces (`URLRequest.allowsCellularAccess`).
    public var allowsCellular: Bool
    /// Networks the system marks expensive: cellular, personal hotspots (`allowsExpensiveNetworkAccess`).
    public var allowsExpensive: Bool
    /// Networks in Low Data Mode (`allowsConstrainedNetworkAccess`).
    public var allowsConstrained: Bool

    /// Creates a set of allowed networks; by default, any.
    public init(allowsCellular: Bool = true, allowsExpensive: Bool = true, allowsConstrained: Bool = true) {
        self.allowsCellular = allowsCellular
        self.allowsExpensive = allowsExpensive
        self.allowsConstrained = allowsConstrained
    }

    /// Any network.
    public static let any = NetworkAccess()
}

extension URLRequest {
    /// The request with `access` set where this platform's `URLRequest` has the flags (Linux has
    /// only `allowsCellularAccess`).
    func allowing(_ access: NetworkAccess) -> URLRequest {
        var request = self
        request.allowsCellularAccess = access.allowsCellular
        #if canImport(Darwin)
            request.allowsExpensiveNetworkAccess = access.allowsExpensive
            request.allowsConstrainedNetworkAccess = access.allowsConstrained
        #endif
        return request
    }
}
