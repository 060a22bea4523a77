import Foundation
import ModelDepotShared

/// Where blobs go in an S3-compatible object store: `s3://BUCKET/PREFIX`, with the endpoint,
/// region and credentials read as every AWS tool reads them (`AWS_ENDPOINT_URL_S3`, else
/// `AWS_ENDPOINT_URL`; `AWS_REGION`, else `us-east-1`; `AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`).
///
/// A custom endpoint (MinIO, moto, Ceph, R2, …) is addressed path-style
/// (`ENDPOINT/BUCKET/KEY`); AWS itself virtual-hosted (`https://BUCKET.s3.REGION.amazonaws.com/KEY`).
public struct S3Location: Sendable, CustomStringConvertible {
    public var bucket: String
    /// Prepended to every key, without leading or trailing `/` (empty: the bucket's root).
    public var prefix: String
    public var region: String
    /// `http` or `https`.
    public var scheme: String
    /// `host[:port]`.
    public var authority: String
    public var pathStyle: Bool
    public var credentials: S3Credentials

    /// Reads `s3://BUCKET/PREFIX` and the AWS environment.
    /// - Parameters:
    ///   - text: The `--blobs` value.
    ///   - environment: The process environment (the `AWS_*` variables).
    ///   - endpoint: Overrides the environment's endpoint (`--s3-endpoint`).
    ///   - region: Overrides `AWS_REGION`.
    /// - Throws: ``DepotError`` `badRequest` naming what is missing or malformed.
    public init(url text: String, environment: [String: String], endpoint: String? = nil, region: String? = nil) throws(DepotError) {
        guard text.lowercased().hasPrefix("s3://") else {
            throw DepotError(.badRequest, "The blob store '\(text)' is not an s3:// URL. Give it as s3://BUCKET or s3://BUCKET/PREFIX.")
        }
        let rest = text.dropFirst("s3://".count)
        let bucket = String(rest.prefix { $0 != "/" })
        guard Self.isValidBucket(bucket) else {
            throw DepotError(
                .badRequest,
                "'\(bucket)' in '\(text)' is not an S3 bucket name (3 to 63 characters: lower-case letters, digits, dots and dashes, starting and ending with a letter or digit)."
            )
        }
        self.bucket = bucket
        prefix = rest.dropFirst(bucket.count).split(separator: "/").joined(separator: "/")
        self.region = region ?? environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"] ?? "us-east-1"
        guard let access = environment["AWS_ACCESS_KEY_ID"], !access.isEmpty,
            let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty
        else {
            throw DepotError(
                .badRequest,
                "The blob store \(text) needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones)."
            )
        }
        credentials = S3Credentials(
            accessKeyID: access, secretAccessKey: secret,
            sessionToken: environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
        if let custom = endpoint ?? environment["AWS_ENDPOINT_URL_S3"] ?? environment["AWS_ENDPOINT_URL"] {
            guard let components = URLComponents(string: custom), let scheme = components.scheme?.lowercased(),
                ["http", "https"].contains(scheme), let host = components.host, !host.isEmpty,
                components.path.isEmpty || components.path == "/"
            else {
                throw DepotError(.badRequest, "The S3 endpoint '\(custom)' is not an http(s)://HOST[:PORT] URL.")
            }
            self.scheme = scheme
            authority = host + (components.port.map { ":\($0)" } ?? "")
            pathStyle = true
        } else {
            scheme = "https"
            authority = "\(bucket).s3.\(self.region).amazonaws.com"
            pathStyle = false
        }
    }

    /// The object key for `name` under the prefix.
    func key(_ name: String) -> String {
        prefix.isEmpty ? name : prefix + "/" + name
    }

    /// The request path (not yet percent-encoded) of `key`, or of the bucket for `nil`.
    func path(of key: String?) -> String {
        let bucketPath = pathStyle ? "/" + bucket : ""
        guard let key else { return bucketPath + "/" }
        return bucketPath + "/" + key
    }

    public var description: String { "s3://\(bucket)\(prefix.isEmpty ? "" : "/" + prefix) at \(scheme)://\(authority)" }

    static func isValidBucket(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (3...63).contains(bytes.count), let first = bytes.first, let last = bytes.last else { return false }
        func alphanumeric(_ byte: UInt8) -> Bool { (48...57).contains(byte) || (97...122).contains(byte) }
        return alphanumeric(first) && alphanumeric(last) && bytes.allSatisfy { alphanumeric($0) || $0 == 46 || $0 == 45 }
    }
}
