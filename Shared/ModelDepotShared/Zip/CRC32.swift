/// The CRC-32 of zip files (ISO 3309, polynomial 0xEDB88320), computed in pieces.
///
/// ```swift
/// var crc = CRC32()
/// crc.update(Array("123456789".utf8))
/// crc.value   // 0xCBF43926
/// ```
public struct CRC32: Sendable {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    private var state: UInt32 = 0xFFFF_FFFF

    /// A CRC over no bytes yet.
    public init() {}

    /// The CRC of every byte given so far.
    public var value: UInt32 { state ^ 0xFFFF_FFFF }

    /// Adds bytes.
    /// - Parameter bytes: The next bytes, in order.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        var crc = state
        Self.table.withUnsafeBufferPointer { table in
            for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        }
        state = crc
    }
}
