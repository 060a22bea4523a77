import Foundation

/// A file that belongs to a version beside its model: labels (`dict.txt`), AutoML Vision Edge's
/// `tflite_metadata.json`, anything the app reads with the model. It is uploaded, stored by its
/// SHA-256, listed in the signed manifest, downloaded, verified and installed with the model, as
/// one version.
///
/// ```swift
/// let labels = try CompanionFile(name: "labels", sha256: digest, size: 1_024)
/// ```
public struct CompanionFile: Sendable, Hashable, Codable {
    /// The most companion files a version may have.
    public static let maximumCount = 16
    /// The largest companion file, in bytes (64 MiB).
    public static let maximumSize = 64 << 20

    /// The name the app asks for: 1–64 characters of `[a-z0-9._-]`, starting with a letter or digit.
    public var name: String
    /// The file's SHA-256, lower-case hex.
    public var sha256: String
    /// The file's size in bytes.
    public var size: Int

    /// Creates a companion file, checking its name, digest and size.
    /// - Throws: ``DepotError`` (`invalid_companion_file`) naming the rule broken.
    public init(name: String, sha256: String, size: Int) throws(DepotError) {
        try Self.check(name: name)
        guard sha256.isSHA256Hex else {
            throw DepotError(
                .invalidCompanionFile,
                "Companion file '\(name)' has SHA-256 '\(sha256.prefix(80))'; it must be 64 lower-case hexadecimal digits.")
        }
        guard (0...Self.maximumSize).contains(size) else {
            throw DepotError(
                .payloadTooLarge,
                "Companion file '\(name)' has \(size) bytes; companion files may have at most \(Self.maximumSize) (64 MiB).")
        }
        self.name = name
        self.sha256 = sha256
        self.size = size
    }

    /// Checks a companion file's name.
    /// - Throws: ``DepotError`` (`invalid_companion_file`) saying which rule the name breaks.
    public static func check(name: String) throws(DepotError) {
        do {
            _ = try ModelName(name)
        } catch {
            throw DepotError(
                .invalidCompanionFile,
                "Companion file name '\(name.prefix(80))' is not allowed: use 1 to 64 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit (for example 'labels')."
            )
        }
    }

    /// Checks a version's list: at most ``maximumCount`` files, each name once.
    /// - Throws: ``DepotError`` (`invalid_companion_file`).
    public static func check(_ files: [CompanionFile]) throws(DepotError) {
        guard files.count <= maximumCount else {
            throw DepotError(
                .invalidCompanionFile, "The upload names \(files.count) companion files; a version may have at most \(maximumCount).")
        }
        var seen = Set<String>()
        for file in files where !seen.insert(file.name).inserted {
            throw DepotError(.invalidCompanionFile, "The upload names companion file '\(file.name)' twice; give each file its own name.")
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            name: container.decode(String.self, forKey: .name), sha256: container.decode(String.self, forKey: .sha256),
            size: container.decode(Int.self, forKey: .size))
    }

    private enum CodingKeys: String, CodingKey {
        case name, sha256, size
    }
}

extension CompanionFile {
    /// The value of ``DepotHeader/companionFiles``: `name=labels;size=1024;sha256=…, name=…`, in
    /// the order their bytes follow the model's in the upload's body.
    public static func header(_ files: [CompanionFile]) -> String {
        files.map { "name=\($0.name);size=\($0.size);sha256=\($0.sha256)" }.joined(separator: ", ")
    }

    /// Reads ``DepotHeader/companionFiles``.
    /// - Throws: ``DepotError`` (`invalid_companion_file`) naming the part that is wrong.
    public static func files(fromHeader value: String) throws(DepotError) -> [CompanionFile] {
        var files: [CompanionFile] = []
        for entry in value.split(separator: ",") {
            var fields: [String: String] = [:]
            for field in entry.split(separator: ";") {
                let pair = field.split(separator: "=", maxSplits: 1)
                guard pair.count == 2 else { throw malformed(entry) }
                fields[pair[0].trimmingCharacters(in: .whitespaces)] = pair[1].trimmingCharacters(in: .whitespaces)
            }
            guard fields.count == 3, let name = fields["name"], let size = fields["size"].flatMap({ Int($0) }),
                let sha256 = fields["sha256"]
            else { throw malformed(entry) }
            files.append(try CompanionFile(name: name, sha256: sha256, size: size))
        }
        try check(files)
        return files
    }

    private static func malformed(_ entry: Substring) -> DepotError {
        DepotError(
            .invalidCompanionFile, "\(DepotHeader.companionFiles) entry '\(entry.prefix(200))' is not 'name=NAME;size=BYTES;sha256=HEX'.")
    }
}
