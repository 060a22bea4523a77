import Crypto

extension SHA256.Digest {
    /// The digest as 64 lower-case hexadecimal digits, as ModelDepot writes SHA-256 everywhere.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

extension SHA256 {
    /// The SHA-256 of a buffer, fed to the hasher in 1 MiB pieces so that a mapped file is
    /// paged in as it is hashed.
    /// - Parameter bytes: The bytes to hash.
    /// - Returns: The digest.
    public static func digest(streaming bytes: UnsafeRawBufferPointer) -> SHA256.Digest {
        var hasher = SHA256()
        var start = 0
        while start < bytes.count {
            let end = min(start + (1 << 20), bytes.count)
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
            start = end
        }
        return hasher.finalize()
    }
}
