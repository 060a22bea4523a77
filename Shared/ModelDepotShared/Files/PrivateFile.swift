import Foundation

/// A new file only its owner can read and write (mode 0600) for a temporary copy of a body, a
/// blob, a patch or what a patch makes: another user of the machine cannot read it while it is
/// written, whatever the process's umask.
package enum PrivateFile {
    /// Creates the file at `url`, replacing a file left there, and opens it for writing. A
    /// symbolic link at `url` is removed, never followed.
    /// - Returns: The open file, or `nil` when it cannot be created (`errno` says why).
    package static func create(at url: URL) -> FileHandle? {
        unlink(url.path)
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }
}
