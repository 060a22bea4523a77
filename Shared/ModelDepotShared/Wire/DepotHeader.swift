import Foundation

/// The names of ModelDepot's own HTTP header fields, the one place the server, the SDK and the
/// CLI take them from.
public enum DepotHeader {
    /// A device's installation id (devices are bucketed by it).
    public static let installationID = "Depot-Installation-ID"
    public static let platform = "Depot-Platform"
    public static let appVersion = "Depot-App-Version"
    public static let osVersion = "Depot-OS-Version"
    public static let sdkVersion = "Depot-SDK-Version"
    public static let country = "Depot-Country"
    /// Free-form device attributes, `key=value,…` (see ``DeviceAttributes``).
    public static let attributes = "Depot-Attributes"
    /// Sent with a manifest: the newest root document's version.
    public static let rootVersion = "Depot-Root-Version"
    /// Sent with a manifest answer to a request with an installation id: the server's token that
    /// it gave this installation the version through the arm; the SDK sends it back with the
    /// version's outcome events, which count only with it. The SDK also sends the token it holds
    /// with a conditional manifest check: a `304` then carries a new one only on another day.
    public static let exposure = "Depot-Exposure"
    /// Sent with an upload: the file's SHA-256, which the stored bytes must match; as a header,
    /// or as a trailer after a chunked body (declared in `Trailer`), so that a client can hash the
    /// file while it sends it.
    public static let contentSHA256 = "Depot-Content-SHA256"
    /// Sent with a chunked upload: the file's size, which the body must have (like S3's
    /// `x-amz-decoded-content-length`); a server refuses a size above its limit before the body.
    public static let contentLength = "Depot-Content-Length"
    /// On an upload: the companion files whose bytes follow the model's in the body, in order
    /// (see ``CompanionFile/header(_:)``); the model's size is then in ``contentLength``.
    public static let companionFiles = "Depot-Companion-Files"
    /// On a 5xx answer: the id under which the server's log keeps the failure's cause.
    public static let requestID = "Depot-Request-ID"
}

/// The `Depot-Attributes` value: `key=value` pairs joined by commas, key and value
/// percent-encoded (anything but letters, digits, `-`, `.`, `_` and `~`), keys sorted.
public enum DeviceAttributes {
    /// The longest value accepted, in bytes.
    public static let maximumLength = 4096

    /// The header value for `attributes`, or `nil` when there are none.
    public static func encode(_ attributes: [String: String]) -> String? {
        guard !attributes.isEmpty else { return nil }
        return attributes.sorted { $0.key < $1.key }.map { "\(escaped($0.key))=\(escaped($0.value))" }.joined(separator: ",")
    }

    /// The attributes in a header value.
    /// - Throws: ``DepotError`` (`bad_request`) naming the value that is too long or the entry that is not `key=value`.
    public static func decode(_ header: String) throws(DepotError) -> [String: String] {
        try read(header, keeping: true)
    }

    /// Checks a header value as ``decode(_:)`` does, without building the attributes: for the
    /// server, which needs them only when a rollout has a condition on one.
    /// - Throws: what ``decode(_:)`` throws for the same value.
    package static func check(_ header: String) throws(DepotError) {
        _ = try read(header, keeping: false)
    }

    /// The attributes in a header value (none unless `keeping`), or the error that it is malformed.
    private static func read(_ header: String, keeping: Bool) throws(DepotError) -> [String: String] {
        guard header.utf8.count <= maximumLength else {
            throw DepotError(
                .badRequest, "\(DepotHeader.attributes) is \(header.utf8.count) bytes long; at most \(maximumLength) are accepted.")
        }
        var header = header
        return try header.withUTF8 { bytes in Result { () throws(DepotError) in try decode(bytes, keeping: keeping) } }.get()
    }

    /// The attributes in a header value's bytes (a `String`'s bytes, read in place); none unless `keeping`.
    private static func decode(_ bytes: UnsafeBufferPointer<UInt8>, keeping: Bool) throws(DepotError) -> [String: String] {
        let comma = UInt8(ascii: ",")
        var attributes = [String: String](minimumCapacity: keeping ? bytes.count { $0 == comma } + 1 : 0)
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != comma { end += 1 }
            defer { start = end + 1 }
            guard end > start else { continue }
            let pair = UnsafeBufferPointer(rebasing: bytes[start..<end])
            func malformed() -> DepotError {
                DepotError(
                    .badRequest,
                    "\(DepotHeader.attributes) entry '\(String(decoding: pair, as: UTF8.self).prefix(80))' is not key=value with percent-encoded key and value (e.g. 'tier=gold,beta=true')."
                )
            }
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { throw malformed() }
            let key = trimmed(pair, 0..<equals), value = trimmed(pair, (equals + 1)..<pair.count)
            guard !key.isEmpty else { throw malformed() }
            if keeping {
                guard let key = unescaped(key), let value = unescaped(value) else { throw malformed() }
                attributes[key] = value
            } else {
                guard isEscaped(key), isEscaped(value) else { throw malformed() }
            }
        }
        return attributes
    }

    private static let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")

    private static func escaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// `bytes[range]` without the spaces around it.
    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        let space = UInt8(ascii: " ")
        var start = range.lowerBound, end = range.upperBound
        while start < end, bytes[start] == space { start += 1 }
        while end > start, bytes[end - 1] == space { end -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// `text` percent-decoded; `nil` for a bad escape or bytes that are not UTF-8.
    private static func unescaped(_ text: UnsafeBufferPointer<UInt8>) -> String? {
        guard text.contains(UInt8(ascii: "%")) else { return String(decoding: text, as: UTF8.self) }
        return percentDecoded(text, validUTF8)
    }

    /// Whether ``unescaped(_:)`` takes `text`, without making a string of text that has no escape.
    private static func isEscaped(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard text.contains(UInt8(ascii: "%")) else { return true }
        return percentDecoded(text) { validUTF8($0) != nil } ?? false
    }

    /// `bytes` as a string, or `nil` if they are not UTF-8: decoding repairs anything else (to
    /// U+FFFD), so the string's bytes then differ. (`String(validating:as:)` would look up generic
    /// metadata on every call; the repairing decoder does not.)
    private static func validUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.utf8.elementsEqual(bytes) ? text : nil
    }

    /// `body` of `text` percent-decoded on the stack (a value is at most 4 KiB); `nil` for a bad escape.
    private static func percentDecoded<Result>(
        _ text: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Result?
    ) -> Result? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: text.count) { decoded -> Result? in
            var count = 0
            var index = 0
            while index < text.count {
                guard text[index] == UInt8(ascii: "%") else {
                    decoded[count] = text[index]
                    count += 1
                    index += 1
                    continue
                }
                guard index + 2 < text.count, let high = text[index + 1].hexDigitValue, let low = text[index + 2].hexDigitValue
                else { return nil }
                decoded[count] = high << 4 | low
                count += 1
                index += 3
            }
            return body(UnsafeBufferPointer(rebasing: decoded[..<count]))
        }
    }
}
