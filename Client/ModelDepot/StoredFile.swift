import Foundation
import ModelDepotShared

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How the SDK reads and writes the small files it keeps (trust state, the installation id, a
/// model's record, the outcome queue): a file that is not there is absent, but one that is there
/// and cannot be read (before the first unlock, without permission) is an error, never "absent";
/// writes are atomic and readable after the first unlock (`completeUntilFirstUserAuthentication`
/// on Apple platforms), so a model can be checked for in the background while the device is locked.
enum StoredFile {
    /// The largest file read: the SDK's own files are a few kilobytes.
    static let maximumSize = 64 << 20

    /// The file's bytes, or `nil` when there is no such file.
    /// - Throws: `DepotError` (`storage_unreadable`) naming the file and the system's reason.
    static func contents(of url: URL) throws(DepotError) -> Data? {
        let descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0 else {
            let failure = errno
            if failure == ENOENT || failure == ENOTDIR { return nil }
            throw unreadable(url, failure)
        }
        defer { close(descriptor) }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return data }
            guard count > 0 else {
                if errno == EINTR { continue }
                throw unreadable(url, errno)
            }
            data.append(contentsOf: chunk[0..<count])
            guard data.count <= maximumSize else {
                throw DepotError(
                    .storageUnreadable,
                    "'\(url.path)' is larger than \(maximumSize) bytes, which no file the SDK keeps is; it was not read.")
            }
        }
    }

    /// Writes `data` in one atomic step.
    static func write(_ data: Data, to url: URL) throws {
        #if canImport(Darwin) && !os(macOS)
            try data.write(to: url, options: [.atomic, .completeFileProtectionUntilFirstUserAuthentication])
        #else
            try data.write(to: url, options: .atomic)
        #endif
    }

    /// Creates a folder the SDK keeps its files in: excluded from backups (a restored backup must
    /// not clone the installation id onto another device, and models are downloaded again) and,
    /// on Apple platforms, readable after the first unlock, for the files created in it too.
    static func prepareDirectory(_ url: URL) throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        #if canImport(Darwin)
            var values = URLResourceValues()
            values.isExcludedFromBackup = true
            var folder = url
            try folder.setResourceValues(values)
            #if !os(macOS)
                try FileManager.default.setAttributes(
                    [.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication], ofItemAtPath: url.path)
            #endif
        #endif
    }

    private static func unreadable(_ url: URL, _ failure: Int32) -> DepotError {
        DepotError(
            .storageUnreadable,
            "'\(url.path)' exists but could not be read (\(String(cString: strerror(failure)))); it is not taken for absent, so the trust state and the installation id stay as they are. Try again once the device is unlocked.",
            cause: "errno \(failure)")
    }
}
