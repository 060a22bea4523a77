import Foundation
import ModelDepotShared

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension ModelDownloader {
    /// Downloads a manifest's blob into its partial file once the manifest's size, URL and the
    /// conditions allow it; returns the complete (not yet verified) file.
    func download(_ manifest: ModelManifest, conditions: DownloadConditions) async throws -> URL {
        guard manifest.size <= configuration.maximumModelSize else {
            throw DepotError(
                .modelTooLarge,
                "'\(manifest.model)' v\(manifest.version) is \(manifest.size) bytes, more than the \(configuration.maximumModelSize) this app accepts (maximumModelSize); nothing was downloaded."
            )
        }
        let url = try blobURL(manifest)
        return try await fetchBlob(manifest, from: url, conditions: conditions)
    }

    /// Downloads the manifest's companion files, each like a model file (resumable ranges, the same
    /// origin and size checks, by patch when one applies to a file in `held`) into its own partial
    /// file; returns them by name, not yet verified.
    func downloadCompanions(
        _ manifest: ModelManifest, held: [String: URL], conditions: DownloadConditions,
        transfer: inout Transfer
    ) async throws -> [String: URL] {
        var files: [String: URL] = [:]
        for file in manifest.files {
            try CompanionFile.check(name: file.name)
            guard file.size <= CompanionFile.maximumSize, files[file.name] == nil else {
                throw DepotError(
                    .invalidMetadata,
                    "The manifest of '\(manifest.model)' v\(manifest.version) names companion file '\(file.name)' twice or with \(file.size) bytes (at most \(CompanionFile.maximumSize)); nothing was downloaded."
                )
            }
            var blob = manifest
            blob.sha256 = file.sha256
            blob.size = file.size
            blob.downloadURL = file.downloadURL
            files[file.name] = try await fetch(blob, patches: file.patches, held: held, conditions: conditions, transfer: &transfer)
        }
        return files
    }

    /// The manifest's download URL, when the app may fetch it: `http(s)`, naming the manifest's
    /// SHA-256 as a path segment, on the server's origin or one in `allowedDownloadOrigins`.
    private func blobURL(_ manifest: ModelManifest) throws -> URL {
        let what = "The manifest of '\(manifest.model)' v\(manifest.version)"
        guard let url = URL(string: manifest.downloadURL, relativeTo: configuration.serverURL)?.absoluteURL, Origin(url) != nil else {
            throw DepotError(
                .invalidMetadata,
                "\(what) names the download URL '\(manifest.downloadURL.prefix(200))', which is not an http(s) URL; nothing was downloaded."
            )
        }
        guard url.pathComponents.contains(manifest.sha256) else {
            throw DepotError(
                .invalidMetadata,
                "\(what) names the download URL '\(url.absoluteString.prefix(200))', which does not name its SHA-256 \(manifest.sha256); nothing was downloaded."
            )
        }
        try checkOrigin(url, what: "The download URL of '\(manifest.model)' v\(manifest.version)")
        return url
    }

    private func checkOrigin(_ url: URL, what: String, otherwise consequence: String = "it was not fetched") throws {
        let origin = Origin(url)
        guard let origin,
            origin == Origin(configuration.serverURL) || configuration.allowedDownloadOrigins.contains(where: { Origin($0) == origin })
        else {
            let named = origin?.description ?? String(url.absoluteString.prefix(200))
            throw DepotError(
                .originNotAllowed,
                "\(what) is on \(named), which is neither the server's origin nor in allowedDownloadOrigins; \(consequence).")
        }
    }

    /// A redirect the app allows: never from `https` to `http`, and only to the server's origin or
    /// one in `allowedDownloadOrigins`. `consequence` says what became of the answer otherwise.
    func checkRedirect(from source: URL, to target: URL, what: String, otherwise consequence: String) throws {
        if source.scheme?.lowercased() == "https", target.scheme?.lowercased() != "https" {
            throw DepotError(
                .insecureRedirect,
                "\(what) was redirected from \(Origin(source).map(String.init(describing:)) ?? "https") to \(target.absoluteString.prefix(200)), from https to http; \(consequence)."
            )
        }
        try checkOrigin(target, what: "A redirect of \(what.prefix(1).lowercased() + what.dropFirst())", otherwise: consequence)
    }

    /// Waits (up to the conditions' bound) until they hold; fails at once without enough space.
    private func waitFor(_ conditions: DownloadConditions, remaining: Int, _ manifest: ModelManifest) async throws {
        var waited: Duration = .zero
        let have = manifest.size - remaining
        let kept = have > 0 ? " The \(have) bytes downloaded so far are kept for next time." : ""
        while true {
            let status = deviceStatus()
            let needed = Int64(max(remaining, 0)) + conditions.minimumFreeSpace
            guard status.freeSpace >= needed else {
                throw DepotError(
                    .notEnoughSpace,
                    "Downloading '\(manifest.model)' v\(manifest.version) needs \(needed) free bytes (\(max(remaining, 0)) for the file, \(conditions.minimumFreeSpace) to keep free); \(status.freeSpace) are free.\(kept.isEmpty ? " Nothing was written." : kept)"
                )
            }
            let reasons = conditions.unmet(by: status)
            if reasons.isEmpty { return }
            guard let bound = conditions.waitsUpTo, waited < bound else {
                throw DepotError(
                    .conditionsNotMet,
                    "'\(manifest.model)' v\(manifest.version) was not downloaded: \(reasons.joined(separator: "; "))\(conditions.waitsUpTo.map { " (waited \($0))" } ?? "").\(kept)"
                )
            }
            try await Task.sleep(for: conditions.pollInterval)
            waited += conditions.pollInterval
        }
    }

    /// Downloads the blob into its partial file in ranges of `downloadChunkSize`, appending each
    /// as it arrives: a cut connection or a killed app loses at most one range, and the next
    /// attempt resumes from the partial file (`If-Range` makes sure it is still the same blob).
    /// The conditions are checked before each range, and a range cut while they stopped holding
    /// (the device moved onto cellular, say) waits for them like the first one, keeping its bytes.
    ///
    /// With a background session and conditions that allow background downloading, the rest of
    /// the file is one range, which the session brings (see ``backgroundRange(_:of:from:network:through:)``).
    private func fetchBlob(_ manifest: ModelManifest, from url: URL, conditions: DownloadConditions) async throws -> URL {
        let background = conditions.allowsBackgroundDownloading ? backgroundDownloads : nil
        let partial = cache.partialFile(manifest.sha256)
        var have = Self.size(of: partial)
        if have > manifest.size {
            try? FileManager.default.removeItem(at: partial)
            have = 0
        }
        var started = false
        while !started || have < manifest.size {
            try await waitFor(conditions, remaining: manifest.size - have, manifest)
            if !started {
                await emit(.downloading(model: manifest.model, version: manifest.version, bytes: have, total: manifest.size))
                started = true
            }
            guard have < manifest.size else { break }
            let end = background == nil ? min(have + configuration.downloadChunkSize, manifest.size) - 1 : manifest.size - 1
            let body: URL, response: HTTPURLResponse
            do {
                if let background {
                    (body, response) = try await backgroundRange(
                        have...end, of: manifest, from: url, network: conditions.networkAccess, through: background)
                } else {
                    (body, response) = try await downloadRange(have...end, of: manifest, from: url, conditions: conditions)
                }
            } catch is ConditionsChanged {
                continue
            }
            defer { try? FileManager.default.removeItem(at: body) }
            switch response.statusCode {
            case 206:
                guard response.value(forHTTPHeaderField: "Content-Range") == "bytes \(have)-\(end)/\(manifest.size)",
                    Self.size(of: body) == end - have + 1
                else {
                    try? FileManager.default.removeItem(at: partial)
                    throw DepotError(
                        .sizeMismatch,
                        "The server sent \(Self.size(of: body)) bytes as '\(response.value(forHTTPHeaderField: "Content-Range") ?? "no Content-Range")' for bytes \(have)-\(end) of a \(manifest.size)-byte file; the download was discarded."
                    )
                }
                if have == 0, FileManager.default.fileExists(atPath: partial.path) { try FileManager.default.removeItem(at: partial) }
                if FileManager.default.fileExists(atPath: partial.path) {
                    try Self.append(body, to: partial)
                } else {
                    try FileManager.default.moveItem(at: body, to: partial)
                }
            case 200:
                // The whole file (the server ignored the range, or the blob changed): start over with it.
                if FileManager.default.fileExists(atPath: partial.path) { try FileManager.default.removeItem(at: partial) }
                try FileManager.default.moveItem(at: body, to: partial)
            default:
                throw Self.serverError((try? Data(contentsOf: body)) ?? Data(), response)
            }
            let before = have
            have = Self.size(of: partial)
            guard have > before || have == manifest.size else {
                try? FileManager.default.removeItem(at: partial)
                throw DepotError(
                    .sizeMismatch,
                    "The server's answer for bytes \(before)-\(end) of '\(manifest.model)' v\(manifest.version) brought the download no further (\(have) of \(manifest.size) bytes); it was discarded."
                )
            }
            guard have <= manifest.size else {
                try? FileManager.default.removeItem(at: partial)
                throw DepotError(
                    .sizeMismatch,
                    "The download of '\(manifest.model)' v\(manifest.version) is longer than the manifest's \(manifest.size) bytes; it was discarded."
                )
            }
            await emit(.downloading(model: manifest.model, version: manifest.version, bytes: have, total: manifest.size))
        }
        return partial
    }

    /// One range, tried again with exponential backoff after a network error or a 5xx. A refusal
    /// (of the answer's head, a redirect, the pace) is not tried again.
    ///
    /// A range that went silent while the app was suspended (it came back to the foreground since
    /// the range began) is tried again without counting as a retry; a network error while the
    /// conditions no longer hold ends in ``ConditionsChanged``, for the caller to wait for them.
    private func downloadRange(
        _ range: ClosedRange<Int>, of manifest: ModelManifest, from url: URL,
        conditions: DownloadConditions
    ) async throws -> (URL, HTTPURLResponse) {
        let resumes = "It resumes from byte \(range.lowerBound) next time."
        var attempt = 0
        while true {
            try Task.checkCancellation()
            let activations = deviceStatus().activations
            do {
                let (body, response) = try await configuration.backgroundExecution.run(
                    named: "ModelDepot \(manifest.model) v\(manifest.version)"
                ) {
                    try await self.followingRedirects(range, of: manifest, from: url, network: conditions.networkAccess)
                }
                guard response.statusCode >= 500, attempt < configuration.retries else { return (body, response) }
                try? FileManager.default.removeItem(at: body)
            } catch let error as DepotError {
                throw error
            } catch let exceeded as TransferLimitExceeded {
                throw DepotError(
                    .sizeMismatch,
                    "The server sent more than the \(exceeded.limit) bytes asked for of '\(manifest.model)' v\(manifest.version) (\(manifest.size) signed bytes in all); reading stopped there and the answer was discarded."
                )
            } catch let stalled as TransferStalled {
                let status = deviceStatus()
                if status.activations != activations { continue }
                guard status.isInBackground, attempt < configuration.retries else {
                    throw DepotError(
                        .transferStalled,
                        "No byte of '\(manifest.model)' v\(manifest.version) arrived for \(stalled.timeout) (stallTimeout); the transfer was cancelled. \(resumes)"
                    )
                }
            } catch let slow as TransferTooSlow {
                throw DepotError(
                    .transferTooSlow,
                    "'\(manifest.model)' v\(manifest.version) arrived at \(slow.receivedInWindow) bytes in the last \(slow.minimum.window), below the minimum of \(slow.minimum.bytesPerSecond) bytes/s (minimumTransferRate); the transfer was cancelled. \(resumes)"
                )
            } catch {
                try Task.checkCancellation()
                if !conditions.unmet(by: deviceStatus()).isEmpty { throw ConditionsChanged() }
                guard attempt < configuration.retries else {
                    throw DepotError(
                        .unavailable,
                        "The download of '\(manifest.model)' v\(manifest.version) was interrupted: \(error.localizedDescription). \(resumes)"
                    )
                }
            }
            try await Task.sleep(for: configuration.retryDelay * (1 << attempt))
            attempt += 1
        }
    }

    /// One range request, following the redirects the app allows: up to `maximumRedirects`, to
    /// the server's origin or an allowed one, never from `https` to `http`. The app key and
    /// `If-Range` go only to the server's own origin. The URL is the manifest's as signed, with
    /// the arm token that makes the server count the download for the manifest's arm.
    private func followingRedirects(
        _ range: ClosedRange<Int>, of manifest: ModelManifest, from url: URL,
        network: NetworkAccess
    ) async throws -> (URL, HTTPURLResponse) {
        let what = "The download of '\(manifest.model)' v\(manifest.version)"
        var target = url
        for _ in 0...configuration.maximumRedirects {
            let request = rangeRequest(range, of: manifest, to: target)
            var limits = rangeLimits(range, size: manifest.size)
            limits.network = network
            let (body, response) = try await configuration.transport.download(request, limits: limits)
            guard [301, 302, 303, 307, 308].contains(response.statusCode) else { return (body, response) }
            try? FileManager.default.removeItem(at: body)
            guard let location = response.value(forHTTPHeaderField: "Location"),
                let next = URL(string: location, relativeTo: target)?.absoluteURL
            else {
                throw DepotError(.unavailable, "\(what) was redirected (\(response.statusCode)) without a Location to follow.")
            }
            try checkRedirect(from: target, to: next, what: what, otherwise: "it was not followed")
            target = next
        }
        throw DepotError(
            .unavailable,
            "\(what) was redirected more than \(configuration.maximumRedirects) times (maximumRedirects); it was not followed further.")
    }

    /// The request for a range of the blob at `target`. The app key and `If-Range` go only to the
    /// server's own origin.
    func rangeRequest(_ range: ClosedRange<Int>, of manifest: ModelManifest, to target: URL) -> URLRequest {
        var request = URLRequest(url: target)
        request.setValue("bytes=\(range.lowerBound)-\(range.upperBound)", forHTTPHeaderField: "Range")
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if Origin(target) == Origin(configuration.serverURL) {
            request.setValue("Bearer \(configuration.appKey)", forHTTPHeaderField: "Authorization")
            request.setValue("\"\(manifest.sha256)\"", forHTTPHeaderField: "If-Range")
        }
        return request
    }

    /// What an answer to a range request may bring, judged on its head before any body byte: a
    /// `206` exactly the range asked for, a `200` the whole file, each announcing that length (an
    /// answer of unknown length could be endless); anything else a short body.
    private func rangeLimits(_ range: ClosedRange<Int>, size: Int) -> TransferLimits {
        limits { response in
            let asked = "bytes \(range.lowerBound)-\(range.upperBound) of a \(size)-byte file"
            let expected: Int
            switch response.statusCode {
            case 206:
                let announced = response.value(forHTTPHeaderField: "Content-Range")
                guard announced == "bytes \(range.lowerBound)-\(range.upperBound)/\(size)" else {
                    throw DepotError(
                        .sizeMismatch,
                        "The server answered '\(announced?.prefix(100).description ?? "no Content-Range")' for \(asked); the answer was refused before its body was read."
                    )
                }
                expected = range.count
            case 200:
                expected = size
            default:
                return 64 << 10
            }
            guard response.expectedContentLength == Int64(expected) else {
                let length = response.expectedContentLength < 0 ? "no length" : "\(response.expectedContentLength) bytes"
                throw DepotError(
                    .sizeMismatch,
                    "The server's \(response.statusCode) for \(asked) announces \(length) where \(expected) belong; the answer was refused before its body was read."
                )
            }
            return expected
        }
    }

    static func append(_ source: URL, to destination: URL) throws {
        let input = try FileHandle(forReadingFrom: source)
        defer { try? input.close() }
        let output = try FileHandle(forWritingTo: destination)
        defer { try? output.close() }
        try output.seekToEnd()
        while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
            try output.write(contentsOf: chunk)
        }
    }

    static func size(of file: URL) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue ?? 0
    }

    /// What the device is doing now.
    func deviceStatus() -> DeviceStatus {
        configuration.deviceStatus.status(for: configuration.cacheDirectory)
    }
}

/// A range failed while the download conditions stopped holding: wait for them, keep the bytes.
private struct ConditionsChanged: Error {}
