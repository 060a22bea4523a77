#if os(Linux)
    import Crypto
    import Foundation
    import Glibc
    import ModelDepotShared
    import Synchronization

    /// A file sent as an HTTP/1.1 request body over a plain TCP connection with `sendfile`: the
    /// kernel moves the bytes from the page cache to the socket, in pieces of ``piece`` bytes
    /// between progress reports, with no copy through this process. (URLSession's upload from a
    /// file on Linux reads it into small buffers and copies them again into libcurl: 4x the time
    /// of `curl -T` for 500 MB.) Linux only, for `http` servers; URLSession for anything else.
    ///
    /// The body is one chunk of the whole file, announced with `Depot-Content-Length`, and its
    /// SHA-256 follows as a trailer (`Depot-Content-SHA256`): another thread hashes the file while
    /// the kernel sends it, so the upload does not wait for a whole-file hash before its first byte.
    struct SocketUpload {
        /// Bytes handed to the kernel between progress reports.
        static let piece = 8 << 20

        let url: URL
        let headers: [String: String]
        let file: String
        /// Companion files sent after the model in the same chunk, announced in
        /// `Depot-Companion-Files`.
        var companions: [CompanionUpload] = []
        /// The digest, when it is known before the body (it then goes as a header, not a trailer:
        /// for a second attempt through a proxy that dropped the trailer).
        var digest: String?

        /// Whether this upload can go this way (plain HTTP to a host name or address).
        static func isAvailable(for url: URL) -> Bool {
            url.scheme == "http" && url.host != nil
        }

        /// Sends the request and reads the whole answer (the request says `Connection: close`).
        /// - Returns: The status and body of the answer.
        /// - Returns: The status and body of the answer, and the file's digest when it was computed
        ///   while sending.
        func transfer(progress: @escaping @Sendable (Int64, Int64) -> Void) throws -> (status: Int, body: Data, digest: String?) {
            let input = open(file, O_RDONLY | O_CLOEXEC)
            guard input >= 0 else { throw DepotError(.fileUnreadable, "Could not open '\(file)': \(String(cString: strerror(errno))).") }
            defer { close(input) }
            var status = stat()
            guard fstat(input, &status) == 0 else {
                throw DepotError(.fileUnreadable, "Could not read '\(file)': \(String(cString: strerror(errno))).")
            }
            let size = Int64(status.st_size)
            let total = size + companions.reduce(0) { $0 + Int64($1.file.size) }

            // `sendfile` to a connection the server closed would raise SIGPIPE and end the process.
            signal(SIGPIPE, SIG_IGN)
            let socket = try openConnection()
            defer { close(socket) }
            let target = url.path.isEmpty ? "/" : url.path + (url.query.map { "?" + $0 } ?? "")
            var head = "POST \(target) HTTP/1.1\r\nHost: \(url.host ?? "")\(url.port.map { ":\($0)" } ?? "")\r\n"
            for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
            head += "\(DepotHeader.contentLength): \(size)\r\nTransfer-Encoding: chunked\r\n"
            if !companions.isEmpty { head += "\(DepotHeader.companionFiles): \(CompanionFile.header(companions.map(\.file)))\r\n" }
            head += digest.map { "\(DepotHeader.contentSHA256): \($0)\r\n" } ?? "Trailer: \(DepotHeader.contentSHA256)\r\n"
            head += "Connection: close\r\n\r\n"
            head += total > 0 ? String(total, radix: 16) + "\r\n" : ""
            let hashing = digest == nil ? DigestThread(file: file) : nil
            var computed: String?
            // A server that refuses early (413, 401, 404) answers and closes while the body is still
            // going out; what it answered is then read below.
            if writeAll(socket, Array(head.utf8)),
                try sendFile(input, path: file, size: size, to: socket, before: 0, total: total, progress: progress),
                try sendCompanions(to: socket, after: size, total: total, progress: progress)
            {
                let trailer: String
                if let hashing {
                    let hex = try hashing.wait()
                    computed = hex
                    trailer = "\(DepotHeader.contentSHA256): \(hex)\r\n"
                } else {
                    trailer = ""
                }
                _ = writeAll(socket, Array("\(total > 0 ? "\r\n" : "")0\r\n\(trailer)\r\n".utf8))
            }
            let answer = try readAnswer(socket)
            return (answer.status, answer.body, computed)
        }

        /// Sends a whole file with `sendfile`, reporting progress against the whole body.
        /// - Returns: Whether all of it went out (`false` when the server closed the connection).
        private func sendFile(
            _ input: Int32, path: String, size: Int64, to socket: Int32, before: Int64, total: Int64,
            progress: @Sendable (Int64, Int64) -> Void
        ) throws -> Bool {
            var offset: off_t = 0
            while offset < size {
                let sent = sendfile(socket, input, &offset, min(Self.piece, Int(size - Int64(offset))))
                if sent < 0, errno == EINTR { continue }
                if sent == 0 {
                    throw DepotError(
                        .fileUnreadable,
                        "'\(path)' changed while it was being sent: it ended after \(offset) of its \(size) bytes. Nothing was stored; upload it again once it is complete."
                    )
                }
                guard sent > 0 else { return false }
                progress(before + Int64(offset), total)
            }
            return true
        }

        private func sendCompanions(
            to socket: Int32, after model: Int64, total: Int64,
            progress: @Sendable (Int64, Int64) -> Void
        ) throws -> Bool {
            var before = model
            for companion in companions {
                let input = open(companion.path, O_RDONLY | O_CLOEXEC)
                guard input >= 0 else {
                    throw DepotError(.fileUnreadable, "Could not open '\(companion.path)': \(String(cString: strerror(errno))).")
                }
                defer { close(input) }
                guard
                    try sendFile(
                        input, path: companion.path, size: Int64(companion.file.size), to: socket, before: before, total: total,
                        progress: progress)
                else { return false }
                before += Int64(companion.file.size)
            }
            return true
        }

        private func openConnection() throws -> Int32 {
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var found: UnsafeMutablePointer<addrinfo>?
            let port = String(url.port ?? 80)
            guard getaddrinfo(url.host ?? "", port, &hints, &found) == 0, let first = found else {
                throw unreachable("cannot resolve \(url.host ?? "")")
            }
            defer { freeaddrinfo(first) }
            var lastError = ""
            var candidate: UnsafeMutablePointer<addrinfo>? = first
            while let address = candidate {
                let descriptor = socket(
                    address.pointee.ai_family, address.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.ai_protocol)
                if descriptor >= 0 {
                    if connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 {
                        var timeout = timeval(tv_sec: 3600, tv_usec: 0)
                        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                        return descriptor
                    }
                    lastError = String(cString: strerror(errno))
                    close(descriptor)
                }
                candidate = address.pointee.ai_next
            }
            throw unreachable(lastError)
        }

        /// Writes every byte; `false` when the connection broke.
        private func writeAll(_ socket: Int32, _ bytes: [UInt8]) -> Bool {
            var written = 0
            while written < bytes.count {
                let count = bytes.withUnsafeBytes { send(socket, $0.baseAddress! + written, bytes.count - written, Int32(MSG_NOSIGNAL)) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                written += count
            }
            return true
        }

        /// Reads until the server closes, then splits the answer into status and body.
        private func readAnswer(_ socket: Int32) throws -> (status: Int, body: Data) {
            var answer = Data()
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let count = recv(socket, &buffer, buffer.count, 0)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                answer.append(contentsOf: buffer[0..<count])
            }
            guard let end = answer.range(of: Data("\r\n\r\n".utf8)),
                let statusLine = String(data: answer[..<end.lowerBound], encoding: .utf8)?.split(separator: "\r\n").first,
                let status = statusLine.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
            else {
                throw unreachable(answer.isEmpty ? "the connection closed without an answer" : "the answer is not HTTP")
            }
            return (status, Data(answer[end.upperBound...]))
        }

        private func unreachable(_ reason: String) -> DepotError {
            DepotError(
                .unavailable,
                "Could not reach the server at \(url.scheme ?? "http")://\(url.host ?? "")\(url.port.map { ":\($0)" } ?? ""): \(reason). Check --server (or DEPOT_SERVER) and that 'depot serve' is running."
            )
        }
    }

    /// A file's SHA-256, computed on a thread of its own at a lower scheduling priority (nice 10):
    /// where the CLI shares a machine with the server, the hash yields to the transfer, and it
    /// still ends long before the transfer does (hashing runs at about twice a disk's write speed).
    private final class DigestThread: Sendable {
        private let result = Mutex<Result<String, DepotError>?>(nil)
        private let done = DispatchSemaphore(value: 0)

        init(file: String) {
            Thread.detachNewThread { [self] in
                // On Linux a nice value belongs to a thread; 0 names the calling one.
                setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
                let digest = Result { () throws(DepotError) in try SHA256.digest(ofFileAt: file).hex }
                result.withLock { $0 = digest }
                done.signal()
            }
        }

        /// The hex digest, once the whole file is hashed.
        func wait() throws(DepotError) -> String {
            done.wait()
            return try result.withLock { $0! }.get()
        }
    }
#endif
