import Crypto
import Foundation
import ModelDepotShared

extension ModelDownloader {
    /// What getting a version's files cost: how many came by patch, the bytes downloaded, and
    /// the bytes spared by patches and by files the device held already.
    struct Transfer {
        var patched = 0
        var fetched = 0
        var saved = 0
    }

    /// Gets one of a manifest's files (`manifest` carries its SHA-256, size and download URL): a
    /// copy of a file in `held` with its SHA-256 (a file the new version did not change), or
    /// one of `patches` applied to a file in `held` when that costs fewer bytes than what is
    /// left to download of the whole file, else whole. A patch that is not what was signed (its
    /// digest) or cannot be fetched, or a downloaded patch that fails to apply for any reason
    /// (it does not fit, makes other bytes, or the disk fills while applying), is thrown away and
    /// the file downloaded whole; a network failure or unmet conditions while fetching the patch
    /// end the attempt (a partial patch is resumed next time).
    /// - Returns: The complete file, not yet verified as a model (its size and SHA-256 are).
    func fetch(
        _ manifest: ModelManifest, patches: [ModelManifest.Patch], held: [String: URL], conditions: DownloadConditions,
        transfer: inout Transfer
    ) async throws -> URL {
        let free = deviceStatus().freeSpace - conditions.minimumFreeSpace
        // A file damaged on disk since its version was installed is neither copied nor patched.
        if let same = held[manifest.sha256], Int64(manifest.size) <= free, (try? SHA256.digest(ofFileAt: same.path).hex) == manifest.sha256
        {
            let partial = cache.partialFile(manifest.sha256)
            try? FileManager.default.removeItem(at: partial)
            try FileManager.default.createDirectory(at: partial.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: same, to: partial)
            transfer.saved += manifest.size
            return partial
        }
        let remaining = manifest.size - Self.size(of: cache.partialFile(manifest.sha256))
        // Applying writes the new file and its streams beside the patch: up to about 3.5 times the file.
        let usable = patches.filter {
            held[$0.from] != nil && $0.size - Self.size(of: cache.partialFile($0.sha256)) < remaining
                && Int64($0.size) + Int64(manifest.size) * 7 / 2 <= free
        }
        if let patch = usable.min(by: { $0.size < $1.size }), let old = held[patch.from] {
            var blob = manifest
            (blob.sha256, blob.size, blob.downloadURL) = (patch.sha256, patch.size, patch.downloadURL)
            let before = Self.size(of: cache.partialFile(patch.sha256))
            do {
                let patchFile = try await download(blob, conditions: conditions)
                transfer.fetched += patch.size - before
                defer { try? FileManager.default.removeItem(at: patchFile) }
                do {
                    let file = try await apply(patchFile, as: patch, to: old, making: manifest)
                    transfer.patched += 1
                    transfer.saved += manifest.size - patch.size
                    return file
                } catch  where !(error is CancellationError) {
                    // Whatever stops a downloaded patch from applying (a bad patch, a full disk,
                    // a held file that cannot be read) would stop it again: the file comes whole.
                }
            } catch let error as DepotError where Self.meansABadPatch.contains(error.code) {
                try? FileManager.default.removeItem(at: cache.partialFile(patch.sha256))
            }
        }
        let before = Self.size(of: cache.partialFile(manifest.sha256))
        let file = try await download(manifest, conditions: conditions)
        transfer.fetched += manifest.size - before
        return file
    }

    /// The failures fetching a patch that say the patch itself cannot be used (not what was
    /// signed, not there, not fetchable from where it is): the file is then downloaded whole. Any
    /// other failure while fetching (the network, the pace, the server's errors, space,
    /// conditions, cancellation) ends the attempt with the partial patch kept for the next.
    static let meansABadPatch: Set<DepotError.Code> = [
        .digestMismatch, .sizeMismatch, .notFound, .forbidden,
        .originNotAllowed, .insecureRedirect, .invalidMetadata,
    ]

    /// Checks a downloaded patch against its digest, applies it to `old` and checks the result
    /// against the manifest's size and SHA-256; the result becomes the file's partial download.
    /// - Throws: `DepotError` `digest_mismatch` for a patch or a result that is not what was
    ///   signed, `invalid_patch` for one that does not apply, `size_mismatch` for a result of
    ///   another size.
    /// Runs off the downloader's actor: hashing and applying take seconds for a large model.
    @concurrent
    private nonisolated func apply(_ patchFile: URL, as patch: ModelManifest.Patch, to old: URL, making manifest: ModelManifest)
        async throws -> URL
    {
        let what = "The patch to '\(manifest.model)' v\(manifest.version)"
        guard try SHA256.digest(ofFileAt: patchFile.path).hex == patch.sha256 else {
            throw DepotError(.digestMismatch, "\(what) is not the one the manifest signed (its SHA-256 differs); it was discarded.")
        }
        let result = cache.partialFile(manifest.sha256).appendingPathExtension("patched")
        defer { try? FileManager.default.removeItem(at: result) }
        guard let output = PrivateFile.create(at: result) else {
            throw DepotError(
                .fileUnreadable, "Could not create '\(result.path)' to apply the patch to '\(manifest.model)' v\(manifest.version).")
        }
        do {
            defer { try? output.close() }
            try MappedFile(path: patchFile.path).withBytes { (patchBytes) throws(DepotError) in
                try MappedFile(path: old.path).withBytes { (oldBytes) throws(DepotError) in
                    try Patch.apply(
                        patchBytes, to: oldBytes, newSize: manifest.size, output: output,
                        temporaryDirectory: cache.partialFile(manifest.sha256).deletingLastPathComponent())
                }
            }
        }
        guard Self.size(of: result) == manifest.size else {
            throw DepotError(.sizeMismatch, "\(what) made \(Self.size(of: result)) bytes, not the manifest's \(manifest.size).")
        }
        guard try SHA256.digest(ofFileAt: result.path).hex == manifest.sha256 else {
            throw DepotError(.digestMismatch, "\(what) made a file whose SHA-256 is not the manifest's; it was discarded.")
        }
        let partial = cache.partialFile(manifest.sha256)
        if FileManager.default.fileExists(atPath: partial.path) { try FileManager.default.removeItem(at: partial) }
        try FileManager.default.moveItem(at: result, to: partial)
        return partial
    }
}
