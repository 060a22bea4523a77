import Foundation

/// A URL's origin (RFC 6454): scheme, host and port, with the scheme's default port filled in.
/// The app key goes only to the server's origin; blobs come only from it and the origins an app allows.
struct Origin: Hashable, Sendable, CustomStringConvertible {
    let scheme: String
    let host: String
    let port: Int

    /// `nil` for a URL that is not `http` or `https` or has no host.
    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty,
            let port = url.port ?? ["http": 80, "https": 443][scheme]
        else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    var description: String { "\(scheme)://\(host):\(port)" }
}
