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

extension SHA256 {
    /// The SHA-256 of a file, read in 1 MiB pieces into one reused buffer: memory stays flat
    /// whatever the file's size.
    /// - Parameter path: The file.
    /// - Returns: The digest.
    /// - Throws: ``DepotError`` (`file_unreadable`) naming the path and the system's reason.
    public static func digest(ofFileAt path: String) throws(DepotError) -> SHA256.Digest {
        let file = try ReadableFile(path: path)
        var hasher = SHA256()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = try file.read(into: buffer)
            if count == 0 { break }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
        return hasher.finalize()
    }
}
