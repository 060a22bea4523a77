import Crypto
import Foundation
import ModelDepotShared

/// A model file that passed every check on this device: a signed manifest, size and SHA-256
/// against it, and TFLite structure. Only the SDK's verifier creates one, and only one can be
/// handed to an interpreter, which reads it through ``loadVerifiedBytes()``.
public struct VerifiedModel: Sendable, Hashable {
    /// The model's name.
    public let name: ModelName
    /// The version.
    public let version: Int
    /// The file's SHA-256.
    public let sha256: String
    /// The verified file.
    public let fileURL: URL
    /// What the file holds.
    public let description: TFLiteModelDescription
    /// The manifest it was downloaded by.
    public let manifest: ModelManifest
    /// When the server last confirmed this version for the device: the last check that got a
    /// verified manifest for it, or a `304` for that manifest. `nil` for a bundled model.
    public internal(set) var confirmedAt: Date?
    /// When the newest manifest accepted for this version expires. A check that fails after this
    /// reports `manifest_expired` (``checkFailure``, a `failed` event, `modelDownloadDidFail`).
    public internal(set) var expires: Date
    /// Why the check made by this call failed although the model was returned (``DownloadPolicy/latestModel``
    /// with the server unreachable or failing): the app sees every outcome, not only the model.
    /// `nil` when the check succeeded or none was made.
    public internal(set) var checkFailure: DepotError?
    /// The verified companion files, by name.
    let companionFiles: [String: URL]
    /// What the file was verified against, and is checked against again when loaded.
    let verificationPolicy: TFLiteVerificationPolicy

    init(
        manifest: ModelManifest, fileURL: URL, description: TFLiteModelDescription, companionFiles: [String: URL] = [:],
        verificationPolicy: TFLiteVerificationPolicy
    ) {
        name = manifest.model
        version = manifest.version
        sha256 = manifest.sha256
        self.fileURL = fileURL
        self.description = description
        self.manifest = manifest
        self.companionFiles = companionFiles
        self.verificationPolicy = verificationPolicy
        expires = manifest.expires
    }

    /// Checks a bundled file, which has no manifest: its TFLite structure and the app's
    /// expectation; it is reported as version 0 from the arm `bundled`.
    static func verifyBundled(
        _ fileURL: URL, name: ModelName, expectation: TFLiteIOExpectation?,
        policy: TFLiteVerificationPolicy
    ) throws(DepotError) -> VerifiedModel {
        let size = (try? FileManager.default.attributesOfItem(atPath: fileURL.path)[.size] as? NSNumber)?.intValue ?? 0
        let description = try MappedFile(path: fileURL.path).withBytes { bytes throws(DepotError) in
            try TFLiteVerifier(policy: policy).verify(bytes)
        }
        try expectation?.check(description)
        let manifest = ModelManifest(
            model: name, version: 0, sha256: try SHA256.digest(ofFileAt: fileURL.path).hex, size: size,
            downloadURL: fileURL.absoluteString,
            tensors: .init(inputs: description.inputs, outputs: description.outputs), arm: "bundled",
            manifestVersion: 0, issued: .distantPast, expires: .distantFuture)
        return VerifiedModel(manifest: manifest, fileURL: fileURL, description: description, verificationPolicy: policy)
    }

    /// Verifies a finished download and its companion files off the caller's actor: hashing and
    /// walking a large model takes a while, and the downloader's other callers go on meanwhile.
    @concurrent
    static func verifyDownload(
        _ file: URL, companions: [String: URL], against manifest: ModelManifest,
        expectation: TFLiteIOExpectation?, policy: TFLiteVerificationPolicy
    ) async throws(DepotError) -> VerifiedModel {
        let verified = try verify(file, against: manifest, expectation: expectation, policy: policy)
        try verifyCompanions(companions, against: manifest)
        return verified
    }

    /// Checks downloaded companion files against the manifest's sizes and SHA-256s.
    /// - Throws: `DepotError` (`size_mismatch`, `digest_mismatch`) naming the file.
    static func verifyCompanions(_ files: [String: URL], against manifest: ModelManifest) throws(DepotError) {
        for file in manifest.files {
            let what = "Companion file '\(file.name)' of '\(manifest.model)' v\(manifest.version)"
            guard let url = files[file.name] else { throw DepotError(.notFound, "\(what) was not downloaded.") }
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue ?? -1
            guard size == file.size else { throw DepotError(.sizeMismatch, "\(what): expected \(file.size) bytes, got \(size).") }
            let digest = try SHA256.digest(ofFileAt: url.path).hex
            guard digest == file.sha256 else {
                throw DepotError(.digestMismatch, "\(what): expected SHA-256 \(file.sha256), got \(digest).")
            }
        }
    }

    /// Checks a file against its manifest: size, SHA-256 (streamed), TFLite structure, and the
    /// app's expected inputs and outputs when given.
    /// - Throws: `DepotError` naming the check, what was expected and what was found.
    static func verify(
        _ fileURL: URL, against manifest: ModelManifest, expectation: TFLiteIOExpectation?,
        policy: TFLiteVerificationPolicy
    ) throws(DepotError) -> VerifiedModel {
        let size = (try? FileManager.default.attributesOfItem(atPath: fileURL.path)[.size] as? NSNumber)?.intValue ?? -1
        guard size == manifest.size else {
            throw DepotError(.sizeMismatch, "Model '\(manifest.model)' v\(manifest.version): expected \(manifest.size) bytes, got \(size).")
        }
        let digest = try SHA256.digest(ofFileAt: fileURL.path).hex
        guard digest == manifest.sha256 else {
            throw DepotError(
                .digestMismatch, "Model '\(manifest.model)' v\(manifest.version): expected SHA-256 \(manifest.sha256), got \(digest).")
        }
        let description = try MappedFile(path: fileURL.path).withBytes { bytes throws(DepotError) in
            try TFLiteVerifier(policy: policy).verify(bytes)
        }
        try expectation?.check(description)
        return VerifiedModel(manifest: manifest, fileURL: fileURL, description: description, verificationPolicy: policy)
    }
}
