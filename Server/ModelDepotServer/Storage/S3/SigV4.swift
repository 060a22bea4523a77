import Crypto
import Foundation
import ModelDepotShared

/// AWS Signature Version 4 for S3, written from the specification (no SDK is available here)
/// and checked against botocore's signer on the same requests (`SigV4Tests`).
struct SigV4: Sendable {
    /// What a request signs instead of its body's hash when the body is streamed.
    static let unsignedPayload = "UNSIGNED-PAYLOAD"
    /// The hash of an empty body.
    static let emptyPayload = SHA256.hash(data: [UInt8]()).hex

    let credentials: S3Credentials
    let region: String
    let service = "s3"

    /// A request to sign: method, URL parts and the headers to sign (besides the ones signing adds).
    struct Request {
        var method: String
        /// The path, not yet percent-encoded (`/bucket/key` or `/key`).
        var path: String
        /// Query parameters, not yet percent-encoded.
        var query: [(name: String, value: String)]
        /// `host[:port]` as sent in the `Host` header.
        var host: String
        var headers: [(name: String, value: String)]
    }

    /// The headers to send: `headers` plus `x-amz-date`, `x-amz-content-sha256`, any
    /// `x-amz-security-token`, and `Authorization`.
    /// - Parameter payloadHash: The body's SHA-256 in hex, or ``unsignedPayload``.
    func sign(_ request: Request, payloadHash: String, at date: Date) -> [(name: String, value: String)] {
        let stamp = Self.timestamp(date)
        var headers = request.headers
        headers.append(("host", request.host))
        headers.append(("x-amz-date", stamp))
        headers.append(("x-amz-content-sha256", payloadHash))
        if let token = credentials.sessionToken { headers.append(("x-amz-security-token", token)) }
        let (canonicalHeaders, signedHeaders) = Self.canonical(headers)
        let canonicalRequest = [
            request.method, Self.encodePath(request.path), Self.canonicalQuery(request.query),
            canonicalHeaders, signedHeaders, payloadHash,
        ].joined(separator: "\n")
        let scope = self.scope(stamp)
        let signature = self.signature(canonicalRequest: canonicalRequest, stamp: stamp, scope: scope)
        var sent = headers.filter { $0.name.lowercased() != "host" }
        sent.append(
            (
                "Authorization",
                "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
            ))
        return sent
    }

    /// The query parameters of a pre-signed URL (the request's own first), valid for
    /// `expires` seconds from `date`; only `host` is signed, the payload is not.
    func presignedQuery(_ request: Request, expires: Int, at date: Date) -> [(name: String, value: String)] {
        let stamp = Self.timestamp(date)
        let scope = self.scope(stamp)
        var query = request.query
        query.append(("X-Amz-Algorithm", "AWS4-HMAC-SHA256"))
        query.append(("X-Amz-Credential", "\(credentials.accessKeyID)/\(scope)"))
        query.append(("X-Amz-Date", stamp))
        query.append(("X-Amz-Expires", String(expires)))
        if let token = credentials.sessionToken { query.append(("X-Amz-Security-Token", token)) }
        query.append(("X-Amz-SignedHeaders", "host"))
        let canonicalRequest = [
            request.method, Self.encodePath(request.path), Self.canonicalQuery(query),
            "host:\(request.host)\n", "host", Self.unsignedPayload,
        ].joined(separator: "\n")
        query.append(("X-Amz-Signature", signature(canonicalRequest: canonicalRequest, stamp: stamp, scope: scope)))
        return query
    }

    /// The canonical request's signature, as lower-case hex.
    func signature(canonicalRequest: String, stamp: String, scope: String) -> String {
        let stringToSign = ["AWS4-HMAC-SHA256", stamp, scope, SHA256.hash(data: Data(canonicalRequest.utf8)).hex].joined(separator: "\n")
        var key = SymmetricKey(data: Data(("AWS4" + credentials.secretAccessKey).utf8))
        for part in [String(stamp.prefix(8)), region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        return Data(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key)).hex
    }

    func scope(_ stamp: String) -> String {
        "\(stamp.prefix(8))/\(region)/\(service)/aws4_request"
    }

    /// `20261124T041200Z`.
    static func timestamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d%02d%02dT%02d%02d%02dZ", parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!, parts.second!)
    }

    /// Lower-case names, values with runs of spaces collapsed, sorted by name; repeated names
    /// joined with commas.
    static func canonical(_ headers: [(name: String, value: String)]) -> (headers: String, signed: String) {
        var merged: [String: [String]] = [:]
        for (name, value) in headers {
            let trimmed = value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            merged[name.lowercased(), default: []].append(trimmed)
        }
        let names = merged.keys.sorted()
        return (names.map { "\($0):\(merged[$0]!.joined(separator: ","))\n" }.joined(), names.joined(separator: ";"))
    }

    static func canonicalQuery(_ query: [(name: String, value: String)]) -> String {
        let encoded: [(name: String, value: String)] = query.map { (encode($0.name), encode($0.value)) }
        let sorted = encoded.sorted { (left: (name: String, value: String), right: (name: String, value: String)) -> Bool in
            left.name == right.name ? left.value < right.value : left.name < right.name
        }
        return sorted.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }

    /// Each path segment percent-encoded once (S3 does not encode twice), `/` kept.
    static func encodePath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { encode(String($0)) }.joined(separator: "/")
    }

    /// `A-Z a-z 0-9 - _ . ~`, indexed by byte.
    private static let unreserved: [Bool] = (0..<256).map { byte in
        (65...90).contains(byte) || (97...122).contains(byte) || (48...57).contains(byte) || [45, 95, 46, 126].contains(byte)
    }

    /// RFC 3986 encoding: everything but `A-Z a-z 0-9 - _ . ~` as `%XX`.
    static func encode(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            if unreserved[Int(byte)] {
                encoded.unicodeScalars.append(UnicodeScalar(byte))
            } else {
                encoded += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0x0f, radix: 16, uppercase: true)
            }
        }
        return encoded
    }
}
