import HTTPTypes
import NIOCore

/// The request header fields the two device requests are answered from (the manifest and the
/// blob it names): what ``ManifestController`` and ``BlobsController`` read, and all that
/// ``FastPathRequestHead`` keeps of a request.
enum DeviceField: Int, CaseIterable, Sendable {
    case authorization, ifNoneMatch, range, ifRange
    case installationID, platform, appVersion, osVersion, sdkVersion, country, attributes, cloudflareCountry, cloudFrontCountry
    /// The exposure token the device holds for the version it has (``ExposureToken/isMadeToday(_:today:key:)``).
    case exposure
    /// Read only from a trusted proxy, for the client's address (``TrustedProxies``).
    case forwardedFor

    var name: HTTPField.Name {
        switch self {
        case .authorization: .authorization
        case .ifNoneMatch: .ifNoneMatch
        case .range: .range
        case .ifRange: .ifRange
        case .installationID: .depotInstallationID
        case .platform: .depotPlatform
        case .appVersion: .depotAppVersion
        case .osVersion: .depotOSVersion
        case .sdkVersion: .depotSDKVersion
        case .country: .depotCountry
        case .attributes: .depotAttributes
        case .cloudflareCountry: .cloudflareCountry
        case .cloudFrontCountry: .cloudFrontCountry
        case .exposure: .depotExposure
        case .forwardedFor: .xForwardedFor
        }
    }
}

/// A request's ``DeviceField``s: the router's `HTTPFields`, or the ``FastPathFields`` that
/// ``FastPathRequestHead`` read.
protocol DeviceFields {
    /// The field's value (repeated fields joined with `, `), or `nil`.
    subscript(device field: DeviceField) -> String? { get }
    /// Calls `body` with the field's value as bytes, or with `nil` when it was not sent: what is
    /// only compared needs no `String`.
    func withValue<Result>(_ field: DeviceField, _ body: (UnsafeRawBufferPointer?) throws -> Result) rethrows -> Result
}

extension HTTPFields: DeviceFields {
    subscript(device field: DeviceField) -> String? { value(field.name) }

    func withValue<Result>(_ field: DeviceField, _ body: (UnsafeRawBufferPointer?) throws -> Result) rethrows -> Result {
        guard var value = self[device: field] else { return try body(nil) }
        return try value.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }
}

/// The ``DeviceField``s of a request read straight from its bytes: where each value lies in the
/// head, made into a `String` only when asked for one.
struct FastPathFields: DeviceFields, Equatable, Sendable {
    /// The bytes the values lie in: those received, from the request's first at the reader index.
    private var bytes = ByteBuffer()
    /// Each field's value, by ``DeviceField/rawValue`` (one lane per field): `(start + 1) << 16 | count`,
    /// 0 when the field was not sent (a head is at most ``FastPathRequestHead/maxLength`` bytes).
    private var spans = SIMD16<UInt32>()

    /// Fields whose values lie in `bytes`; none is set yet.
    init(in bytes: ByteBuffer) { self.bytes = bytes }

    /// Fields that lie in no request (set with ``set(_:_:)``).
    init() {}

    subscript(device field: DeviceField) -> String? {
        guard let (start, count) = span(field) else { return nil }
        return bytes.getString(at: bytes.readerIndex + start, length: count)
    }

    func withValue<Result>(_ field: DeviceField, _ body: (UnsafeRawBufferPointer?) throws -> Result) rethrows -> Result {
        guard let (start, count) = span(field) else { return try body(nil) }
        return try bytes.withUnsafeReadableBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<(start + count)])) }
    }

    /// Sets a field to the `count` bytes at `start` (from the reader index); `false` if it was set
    /// already (a repeated field is left to the router), or lies beyond 64 KiB.
    mutating func set(_ field: DeviceField, start: Int, count: Int) -> Bool {
        guard spans[field.rawValue] == 0, (0..<0xFFFF).contains(start), (0...0xFFFF).contains(count) else { return false }
        spans[field.rawValue] = UInt32(start + 1) << 16 | UInt32(count)
        return true
    }

    /// Sets a field to `value`, added after the bytes already held; `false` if it was set already,
    /// or would lie beyond 64 KiB.
    mutating func set(_ field: DeviceField, _ value: String) -> Bool {
        guard spans[field.rawValue] == 0, bytes.readableBytes < 0xFFFF, value.utf8.count <= 0xFFFF else { return false }
        let start = bytes.readableBytes
        bytes.writeString(value)
        return set(field, start: start, count: bytes.readableBytes - start)
    }

    private func span(_ field: DeviceField) -> (start: Int, count: Int)? {
        let span = spans[field.rawValue]
        return span == 0 ? nil : (Int(span >> 16) - 1, Int(span & 0xFFFF))
    }

    static func == (lhs: FastPathFields, rhs: FastPathFields) -> Bool {
        DeviceField.allCases.allSatisfy { lhs[device: $0] == rhs[device: $0] }
    }
}
