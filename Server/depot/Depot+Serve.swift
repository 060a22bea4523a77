import ArgumentParser
import Foundation
import Logging
import ModelDepotServer
import ModelDepotShared

extension Depot {
    /// `depot serve`: runs the server.
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the ModelDepot server (embedded SQLite and blob store under the storage directory).",
            discussion: """
                Examples:
                  depot serve
                  depot serve --host 0.0.0.0 --storage /var/lib/modeldepot --admin-token-file admin-token.txt
                  depot serve --database postgres://depot:secret@db/depot --blobs s3://models/prod

                Flags override the environment: DEPOT_HOST, DEPOT_PORT, DEPOT_STORAGE, DEPOT_DATABASE, DEPOT_BLOBS,
                DEPOT_BLOB_REDIRECT, DEPOT_MAX_UPLOAD_SIZE, DEPOT_MAX_ASSOCIATED_FILES_SIZE,
                DEPOT_LOG_LEVEL, DEPOT_MANIFEST_LIFETIME, DEPOT_HEAD_TIMEOUT, DEPOT_IDLE_TIMEOUT, DEPOT_BODY_TIMEOUT,
                DEPOT_SEND_TIMEOUT, DEPOT_MAX_CONNECTIONS, DEPOT_MAX_HEAD_SIZE, DEPOT_AUTH_FAILURE_ALLOWANCE,
                DEPOT_TRUSTED_PROXIES (comma-separated), DEPOT_PUBLIC_URL, DEPOT_CONSOLE_IDLE_TIMEOUT, DEPOT_CONSOLE_SESSION_LIFETIME, DEPOT_GUARD_REVIEW_INTERVAL,
                DEPOT_OUTCOME_INSTALLATIONS_PER_NETWORK, DEPOT_OUTCOME_NETWORK_PREFIXES,
                DEPOT_OUTCOME_RETENTION_DAYS, DEPOT_PATCH_FROM, DEPOT_PATCH_MAX_SIZE,
                DEPOT_PATCH_INTERVAL. On first start the server creates an admin token and prints it once;
                DEPOT_ADMIN_TOKEN or --admin-token-file sets that first token instead.
                It also creates its online manifest-signing key (with SQLite, under storage/keys, mode 0600;
                with PostgreSQL, in its signing_key table); devices trust it once a root document lists it
                ('depot keys root init').
                SIGTERM and SIGINT finish in-flight requests, then stop.
                """
        )

        @Option(help: "The address to listen on (default 127.0.0.1).")
        var host: String?

        @Option(help: "The port to listen on; 0 picks a free one (default 8080).")
        var port: Int?

        @Option(help: "The data directory (default ./storage).")
        var storage: String?

        @Option(
            help:
                "The catalog in PostgreSQL, as postgres://USER:PASSWORD@HOST:PORT/DATABASE[?sslmode=disable|prefer|require]; TLS is required unless the host is this machine or sslmode says otherwise (default: the embedded SQLite file under --storage)."
        )
        var database: String?

        @Option(
            help:
                "Keep blobs in an S3-compatible object store: s3://BUCKET[/PREFIX] (default: files under --storage). Endpoint, region and credentials come from AWS_ENDPOINT_URL_S3 (else AWS_ENDPOINT_URL; a custom endpoint is addressed path-style), AWS_REGION (default us-east-1), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN."
        )
        var blobs: String?

        @Option(name: .customLong("s3-endpoint"), help: "The object store's endpoint, overriding AWS_ENDPOINT_URL_S3 and AWS_ENDPOINT_URL.")
        var s3Endpoint: String?

        @Option(name: .customLong("s3-region"), help: "The object store's region, overriding AWS_REGION.")
        var s3Region: String?

        @Option(
            help:
                "With --blobs: answer downloads with a 307 to a pre-signed URL valid this many seconds (60 to 604800), so the object store or a CDN serves the bytes; without it they stream through the server."
        )
        var blobRedirect: Int?

        @Option(help: "The largest upload accepted, in bytes (default 2147483648; at most 1099511627776, 1 TiB).")
        var maxUploadSize: Int?

        @Option(
            help:
                "The most bytes the associated files packed in an uploaded model (label files, vocabularies) may inflate to, all together (default 268435456, 256 MiB); a model over it is refused (422 associated_files_too_large)."
        )
        var maxAssociatedFilesSize: Int?

        @Option(help: "trace, debug, info, notice, warning, error or critical (default info).")
        var logLevel: String?

        @Option(
            help:
                "How long a signed manifest is good for, in seconds (default 604800, 7 days; 60 to 31536000). It is re-signed after half of it."
        )
        var manifestLifetime: Int?

        @Option(help: "A file holding the first admin token's secret.")
        var adminTokenFile: String?

        @Option(help: "Seconds from a request head's first byte to its last before 408 and closing (default 60).")
        var headTimeout: Int?

        @Option(help: "Seconds a keep-alive connection may wait for its next request (default 75).")
        var idleTimeout: Int?

        @Option(help: "Seconds between two reads of a request body before the connection closes (default 60).")
        var bodyTimeout: Int?

        @Option(help: "Seconds the client may acknowledge no byte of an answer before the connection closes (default 60).")
        var sendTimeout: Int?

        @Option(
            help: "Seconds between two reviews of the running guarded rollouts (and retries of their webhooks), 10 to 86400 (default 60).")
        var guardReviewInterval: Int?

        @Option(
            help:
                "How many installations per client network (an IPv4 /24, an IPv6 /64), model and hour add to the outcomes that results and guards read (default 100, at least 1); the outcomes of more are kept but not counted."
        )
        var outcomeInstallationsPerNetwork: Int?

        @Option(
            help:
                "The prefix lengths a client network is cut at for those counts and for guards, IPv4 then IPv6 (default 24,64; e.g. 24,48 where one client holds a whole IPv6 /48)."
        )
        var outcomeNetworkPrefixes: String?

        @Option(
            help:
                "Days outcome events are kept, 8 to 3650 (default 90): older ones are deleted every hour, from results and guards too."
        )
        var outcomeRetentionDays: Int?

        @Option(help: "Patches to each published version from this many published versions before it, 0 to 16; 0 makes none (default 3).")
        var patchFrom: Int?

        @Option(
            help:
                "The largest file, in bytes, that gets patches (old or new), up to 1073741824; making one takes up to about 9 times that in memory (default 268435456)."
        )
        var patchMaxSize: Int?

        @Option(
            help: "Seconds between two looks for patches to make, besides right after a publish on this server, 10 to 86400 (default 60).")
        var patchInterval: Int?

        @Option(help: "Open connections at most; one more gets 503 and is closed (default 10000).")
        var maxConnections: Int?

        @Option(help: "The largest request head in bytes; a larger one gets 431 (default 16384).")
        var maxHeadSize: Int?

        @Option(
            help:
                "Failed authentications in a row allowed per client address, and wrong secrets per key id, before 429 and a backoff from 1 s doubling to 5 minutes (default 10)."
        )
        var authFailureAllowance: Int?

        @Option(
            help:
                "A proxy or load balancer (an address or CIDR network, e.g. 10.0.0.0/8; repeat for more) whose X-Forwarded-For and X-Forwarded-Proto are believed: the client's address (throttling, logs) and scheme (Secure cookies) are taken from them only on connections from these."
        )
        var trustedProxy: [String] = []

        @Option(
            help: "The URL clients reach this server at, e.g. https://models.example.com; with https, console cookies are always Secure.")
        var publicURL: String?

        @Option(help: "Seconds a console session lasts unused (default 3600).")
        var consoleIdleTimeout: Int?

        @Option(help: "Seconds a console session lasts at most from sign-in (default 28800, 8 hours).")
        var consoleSessionLifetime: Int?

        @Option(
            help:
                "Once listening, write the server's address (http://HOST:PORT) to this file, whole or not at all: for scripts that start the server and wait for it."
        )
        var readyFile: String?

        func run() async throws {
            let configuration = try resolve(ProcessInfo.processInfo.environment)
            #if canImport(Glibc)
                LargeAllocations.returnToTheSystemWhenFreed()
            #endif
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = configuration.logLevel
                return handler
            }
            let app = try await exitingOnStartFailure {
                try await buildApplication(configuration) { port in
                    let address = "http://\(configuration.host):\(port)"
                    if let readyFile { announce(address, in: readyFile) }
                    FileHandle.standardOutput.write(Data("ModelDepot listening on \(address)\n".utf8))
                }
            }
            try await app.runService()
        }

        /// Writes `address` to `path` (a file beside it, renamed into place); a server that cannot
        /// say it is ready stops (exit 1), since whoever waits for the file would wait forever.
        private func announce(_ address: String, in path: String) {
            do {
                try Data((address + "\n").utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                printError(
                    "Could not write the server's address to --ready-file \(path): \(error.localizedDescription). Name a file in a directory the server can write to."
                )
                Foundation.exit(1)
            }
        }

        /// Whatever stops the server from starting (an unreachable database, a storage directory
        /// it cannot use) is the operator's to fix: it exits 1, not 2.
        private func exitingOnStartFailure<T>(_ start: () async throws -> T) async throws -> T {
            do {
                return try await start()
            } catch let error as DepotError {
                printError(error.message)
                Foundation.exit(1)
            }
        }

        func resolve(_ environment: [String: String]) throws -> ServerConfiguration {
            var configuration = ServerConfiguration()
            configuration.host = host ?? environment["DEPOT_HOST"] ?? configuration.host
            configuration.storageDirectory = storage ?? environment["DEPOT_STORAGE"] ?? configuration.storageDirectory
            if let database = database ?? environment["DEPOT_DATABASE"] {
                do {
                    _ = try PostgresLocation(url: database)
                } catch {
                    throw ValidationError(
                        "\(error.message) Leave --database (DEPOT_DATABASE) out to use the embedded SQLite file under --storage.")
                }
                configuration.database = database
            }
            try resolveObjectStore(environment, into: &configuration)
            if let port = try port ?? environment["DEPOT_PORT"].map({ try number($0, "DEPOT_PORT") }) {
                guard (0...65535).contains(port) else {
                    throw ValidationError("The port (--port, DEPOT_PORT) must be 0 to 65535, not \(port).")
                }
                configuration.port = port
            }
            if let size = try maxUploadSize ?? environment["DEPOT_MAX_UPLOAD_SIZE"].map({ try number($0, "DEPOT_MAX_UPLOAD_SIZE") }) {
                guard (1...(1 << 40)).contains(size) else {
                    throw ValidationError(
                        "The maximum upload size (--max-upload-size, DEPOT_MAX_UPLOAD_SIZE) must be 1 to 1099511627776 bytes (1 TiB), not \(size)."
                    )
                }
                configuration.maximumUploadSize = size
            }
            if let size = try maxAssociatedFilesSize
                ?? environment["DEPOT_MAX_ASSOCIATED_FILES_SIZE"].map({ try number($0, "DEPOT_MAX_ASSOCIATED_FILES_SIZE") })
            {
                guard size >= 0 else {
                    throw ValidationError(
                        "The maximum size of associated files (--max-associated-files-size, DEPOT_MAX_ASSOCIATED_FILES_SIZE) must be 0 or more bytes, not \(size)."
                    )
                }
                configuration.verificationPolicy.maximumAssociatedFilesSize = size
            }
            if let lifetime = try manifestLifetime
                ?? environment["DEPOT_MANIFEST_LIFETIME"].map({ try number($0, "DEPOT_MANIFEST_LIFETIME") })
            {
                guard (60...31_536_000).contains(lifetime) else {
                    throw ValidationError(
                        "The manifest lifetime (--manifest-lifetime, DEPOT_MANIFEST_LIFETIME) must be 60 to 31536000 seconds (365 days), not \(lifetime)."
                    )
                }
                configuration.manifestLifetime = TimeInterval(lifetime)
            }
            if let seconds = try guardReviewInterval
                ?? environment["DEPOT_GUARD_REVIEW_INTERVAL"].map({ try number($0, "DEPOT_GUARD_REVIEW_INTERVAL") })
            {
                guard (10...86_400).contains(seconds) else {
                    throw ValidationError(
                        "The guard review interval (--guard-review-interval, DEPOT_GUARD_REVIEW_INTERVAL) must be 10 to 86400 seconds, not \(seconds)."
                    )
                }
                configuration.guardReviewInterval = .seconds(seconds)
            }
            if let installations = try outcomeInstallationsPerNetwork
                ?? environment["DEPOT_OUTCOME_INSTALLATIONS_PER_NETWORK"].map({ try number($0, "DEPOT_OUTCOME_INSTALLATIONS_PER_NETWORK") })
            {
                guard installations >= 1 else {
                    throw ValidationError(
                        "The installations per network (--outcome-installations-per-network, DEPOT_OUTCOME_INSTALLATIONS_PER_NETWORK) must be at least 1, not \(installations)."
                    )
                }
                configuration.outcomeInstallationsPerNetwork = installations
            }
            if let prefixes = outcomeNetworkPrefixes ?? environment["DEPOT_OUTCOME_NETWORK_PREFIXES"] {
                do {
                    configuration.outcomeNetworkPrefixes = try NetworkPrefixes(prefixes)
                } catch {
                    throw ValidationError("--outcome-network-prefixes (DEPOT_OUTCOME_NETWORK_PREFIXES): \(error.message)")
                }
            }
            if let days = try outcomeRetentionDays
                ?? environment["DEPOT_OUTCOME_RETENTION_DAYS"].map({ try number($0, "DEPOT_OUTCOME_RETENTION_DAYS") })
            {
                guard (8...3_650).contains(days) else {
                    throw ValidationError(
                        "The outcome retention (--outcome-retention-days, DEPOT_OUTCOME_RETENTION_DAYS) must be 8 to 3650 days, not \(days)."
                    )
                }
                configuration.outcomeRetentionDays = days
            }
            try resolvePatches(environment, into: &configuration)
            try resolveConnectionLimits(environment, into: &configuration.connectionLimits)
            try resolveClients(environment, into: &configuration)
            if let allowance = try authFailureAllowance
                ?? environment["DEPOT_AUTH_FAILURE_ALLOWANCE"].map({ try number($0, "DEPOT_AUTH_FAILURE_ALLOWANCE") })
            {
                guard allowance >= 1 else {
                    throw ValidationError(
                        "The authentication failure allowance (--auth-failure-allowance, DEPOT_AUTH_FAILURE_ALLOWANCE) must be at least 1, not \(allowance)."
                    )
                }
                configuration.authenticationFailureAllowance = allowance
            }
            if let level = logLevel ?? environment["DEPOT_LOG_LEVEL"] {
                guard let parsed = Logger.Level(rawValue: level.lowercased()) else {
                    throw ValidationError(
                        "Log level '\(level)' (--log-level, DEPOT_LOG_LEVEL) is unknown; use trace, debug, info, notice, warning, error or critical."
                    )
                }
                configuration.logLevel = parsed
            }
            if let adminTokenFile {
                guard let text = try? String(contentsOfFile: adminTokenFile, encoding: .utf8) else {
                    throw ValidationError("Could not read the admin token file '\(adminTokenFile)' (--admin-token-file).")
                }
                configuration.initialAdminToken = text.trimmingCharacters(in: .whitespacesAndNewlines)
            } else {
                configuration.initialAdminToken = environment["DEPOT_ADMIN_TOKEN"]
            }
            if let token = configuration.initialAdminToken {
                do { try AdminTokenStrength.check(token) } catch { throw ValidationError(error.message) }
            }
            return configuration
        }

        private func resolveConnectionLimits(_ environment: [String: String], into limits: inout ConnectionLimits) throws {
            let timeouts: [(Int?, String, WritableKeyPath<ConnectionLimits, Duration>)] = [
                (headTimeout, "DEPOT_HEAD_TIMEOUT", \.headTimeout), (idleTimeout, "DEPOT_IDLE_TIMEOUT", \.idleTimeout),
                (bodyTimeout, "DEPOT_BODY_TIMEOUT", \.bodyTimeout), (sendTimeout, "DEPOT_SEND_TIMEOUT", \.sendTimeout),
            ]
            for (flag, variable, path) in timeouts {
                guard let seconds = try flag ?? environment[variable].map({ try number($0, variable) }) else { continue }
                guard (1...86_400).contains(seconds) else {
                    throw ValidationError("\(variable) (--\(Self.flag(variable))) must be 1 to 86400 seconds, not \(seconds).")
                }
                limits[keyPath: path] = .seconds(seconds)
            }
            if let maximum = try maxConnections ?? environment["DEPOT_MAX_CONNECTIONS"].map({ try number($0, "DEPOT_MAX_CONNECTIONS") }) {
                guard maximum >= 1 else {
                    throw ValidationError(
                        "The maximum number of connections (--max-connections, DEPOT_MAX_CONNECTIONS) must be at least 1, not \(maximum).")
                }
                limits.maximumConnections = maximum
            }
            if let size = try maxHeadSize ?? environment["DEPOT_MAX_HEAD_SIZE"].map({ try number($0, "DEPOT_MAX_HEAD_SIZE") }) {
                guard (1024...1 << 20).contains(size) else {
                    throw ValidationError(
                        "The maximum request head size (--max-head-size, DEPOT_MAX_HEAD_SIZE) must be 1024 to 1048576 bytes, not \(size).")
                }
                limits.maximumHeadSize = size
            }
        }

        private func resolveObjectStore(_ environment: [String: String], into configuration: inout ServerConfiguration) throws {
            let redirect = try blobRedirect ?? environment["DEPOT_BLOB_REDIRECT"].map { try number($0, "DEPOT_BLOB_REDIRECT") }
            guard let url = blobs ?? environment["DEPOT_BLOBS"] else {
                if redirect != nil {
                    throw ValidationError(
                        "--blob-redirect (DEPOT_BLOB_REDIRECT) needs --blobs s3://…: blobs under --storage are served by the server itself."
                    )
                }
                return
            }
            do {
                configuration.objectStore = try S3Location(url: url, environment: environment, endpoint: s3Endpoint, region: s3Region)
            } catch {
                throw ValidationError("\(error.message) Leave --blobs (DEPOT_BLOBS) out to keep blobs under --storage.")
            }
            if let redirect {
                guard (60...604_800).contains(redirect) else {
                    throw ValidationError(
                        "--blob-redirect (DEPOT_BLOB_REDIRECT) must be 60 to 604800 seconds (S3 pre-signed URLs last at most 7 days), not \(redirect)."
                    )
                }
                configuration.blobRedirectLifetime = redirect
            }
        }

        /// `head-timeout` for `DEPOT_HEAD_TIMEOUT`.
        private static func flag(_ variable: String) -> String {
            variable.dropFirst("DEPOT_".count).lowercased().replacingOccurrences(of: "_", with: "-")
        }

        func number(_ text: String, _ name: String) throws -> Int {
            guard let value = Int(text) else { throw ValidationError("\(name)='\(text)' is not a whole number.") }
            return value
        }
    }
}
