import ArgumentParser
import Foundation
import ModelDepotRollouts
import ModelDepotServer
import ModelDepotShared

extension Depot {
    /// `depot upload MODEL FILE [--file NAME=PATH…]`: streams a .tflite file and its companion
    /// files as the model's next version.
    struct Upload: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upload a .tflite file as the model's next version (checked and hashed on both ends).",
            discussion: """
                Examples:
                  depot upload flowers flowers.tflite --file labels=labels.txt
                  depot upload flowers flowers.tflite --publish --notes "Retrained on more daisies"
                  depot upload flowers ./automl-export/ --publish

                Companion files (labels, settings) go with the model as one version: --file labels=dict.txt. \
                Given an AutoML Vision Edge export folder, uploads its model.tflite with dict.txt as 'labels' and \
                tflite_metadata.json as 'automl'.
                """
        )
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The model's name.") var model: String
        @Argument(help: "The .tflite file, or an AutoML Vision Edge export folder.") var file: String
        @Option(name: .customLong("file"), help: ArgumentHelp("A companion file, NAME=PATH (repeatable).", valueName: "name=path"))
        var companions: [String] = []
        @Flag(help: "Publish the new version at once.") var publish = false
        @Option(help: "Release notes.") var notes: String?
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let name = try ModelName(model)
            let client = try connection.client()
            var query = URLComponents()
            query.queryItems =
                [URLQueryItem(name: "publish", value: publish ? "true" : "false")]
                + (notes.map { [URLQueryItem(name: "notes", value: $0)] } ?? [])
            let source = try UploadSource(path: file, options: companions)
            let bar = ProgressBar()
            let version = try await client.upload(
                "/v1/admin/models/\(name)/versions?\(query.percentEncodedQuery ?? "")", file: source.model,
                companions: source.companions, as: ModelVersion.self
            ) { sent, total in
                bar.update(sent: sent, total: total)
            }
            bar.finish()
            let files = version.files.isEmpty ? "" : " with \(version.files.map { "'\($0.name)'" }.joined(separator: ", "))"
            if json { return print(try JSONOutput.string(version)) }
            print(
                "Uploaded '\(name)' version \(version.version) (\(version.size) bytes, sha256 \(version.sha256))\(files)\(version.published ? ", published" : "")."
            )
            if version.published { print(try await Publish.effect(of: version.version, model: name, client: client)) }
        }
    }

    /// `depot versions MODEL [VERSION]`.
    struct Versions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a model's versions, newest first, or show one version in full.",
            discussion: """
                Examples:
                  depot versions flowers
                  depot versions flowers 8
                  depot versions flowers 8 --patches

                With a version number, shows its inputs and outputs, TFLite Model Metadata, labels and companion files; with
                --patches, the patches the server made to its files from earlier versions instead.
                """)
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The model's name.") var model: String
        @Argument(help: "A version number: show that version in full.") var version: Int?
        @Flag(help: "Show the version's patches: from which version, for which file, their size and whether manifests offer them.")
        var patches = false
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            if patches && version == nil {
                throw ValidationError("--patches shows one version's patches: give its number, e.g. 'depot versions \(model) 3 --patches'.")
            }
            let name = try ModelName(model)
            if let version, patches {
                let client = try connection.client()
                let shown = try await client.get("/v1/admin/models/\(name)/versions/\(version)", as: ModelVersion.self)
                let list = try await client.get("/v1/admin/models/\(name)/versions/\(version)/patches", as: VersionPatchList.self)
                return print(json ? try JSONOutput.string(list) : Self.patchTable(list, of: shown))
            }
            if let version {
                let shown = try await connection.client().get("/v1/admin/models/\(name)/versions/\(version)", as: ModelVersion.self)
                return print(json ? try JSONOutput.string(shown) : TerminalText.lines(VersionText(version: shown).lines))
            }
            let list = try await connection.client().get("/v1/admin/models/\(name)/versions", as: ModelVersionList.self)
            if json { return print(try JSONOutput.string(list)) }
            print(
                TextTable(
                    ["VERSION", "PUBLISHED", "SIZE", "SHA256", "CREATED", "METADATA", "NOTES"],
                    list.versions.map {
                        [
                            "\($0.version)", $0.published ? "yes" : "no", "\($0.size)", String($0.sha256.prefix(12)),
                            $0.createdAt.formatted(.iso8601), Self.metadataSummary($0.tflite), $0.notes,
                        ]
                    }
                ).rendered)
        }

        /// A version's patches: each one's size as a share of the file it makes.
        static func patchTable(_ list: VersionPatchList, of version: ModelVersion) -> String {
            guard !list.patches.isEmpty else {
                return "Version \(version.version) has no patches (yet: they are made in the background after a publish)."
            }
            let sizes = Dictionary(uniqueKeysWithValues: version.files.map { ($0.name, $0.size) })
            return TextTable(
                ["FROM", "FILE", "SIZE", "OF THE FILE", "OFFERED", "SHA256"],
                list.patches.map { patch in
                    let whole = patch.file.flatMap { sizes[$0] } ?? version.size
                    return [
                        "\(patch.fromVersion)", patch.file ?? "(model)", "\(patch.size)",
                        whole > 0 ? String(format: "%.2f%%", 100 * Double(patch.size) / Double(whole)) : "-",
                        patch.offered ? "yes" : "no (over 80%)", patch.sha256.map { String($0.prefix(12)) } ?? "-",
                    ]
                }
            ).rendered
        }

        /// The metadata's name and how many labels, or `-`.
        static func metadataSummary(_ model: TFLiteModelDescription) -> String {
            guard let metadata = model.modelMetadata else { return "-" }
            let labels = model.labelFiles.first.map { ", \($0.labels.count) labels" } ?? ""
            return (metadata.name ?? "unnamed") + labels
        }
    }

    /// `depot publish MODEL VERSION`.
    struct Publish: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish a version: devices may get it.",
            discussion: """
                Examples:
                  depot publish flowers 8
                """
        )
        @OptionGroup var target: VersionTarget

        func run() async throws {
            let client = try target.client()
            let result = try await client.post(try target.path("/publish"), as: ModelVersion.self)
            print("Published '\(result.model)' version \(result.version).")
            print(try await Self.effect(of: result.version, model: try ModelName(target.model), client: client))
        }

        /// What publishing `version` changed for devices, from the rollout and the published versions.
        static func effect(of version: Int, model: ModelName, client: AdminClient) async throws -> String {
            let rollout = try await client.get("/v1/admin/models/\(model)/rollout", as: Rollout.self)
            let published = try await client.get("/v1/admin/models/\(model)/versions", as: ModelVersionList.self).versions.filter(
                \.published
            ).map(\.version)
            return RolloutSegments(rollout, newestPublished: published.max())
                .afterPublishing(version, of: model, previous: published.filter { $0 != version }.max())
        }
    }

    /// `depot unpublish MODEL VERSION`.
    struct Unpublish: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Unpublish a version: devices no longer get it.",
            discussion: """
                Examples:
                  depot unpublish flowers 7
                """
        )
        @OptionGroup var target: VersionTarget

        func run() async throws {
            let result = try await target.client().post(try target.path("/unpublish"), as: ModelVersion.self)
            print("Unpublished '\(result.model)' version \(result.version).")
        }
    }

    /// `depot delete-version MODEL VERSION`.
    struct DeleteVersion: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a version (its file goes once nothing references it).",
            discussion: """
                Examples:
                  depot delete-version flowers 7
                """
        )
        @OptionGroup var target: VersionTarget

        func run() async throws {
            try await target.client().delete(try target.path())
            print("Deleted '\(target.model)' version \(target.version).")
        }
    }
}

/// The connection, model and version that publish, unpublish and delete-version act on.
struct VersionTarget: ParsableArguments {
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The model's name.") var model: String
    @Argument(help: "The version number.") var version: Int

    func client() throws -> AdminClient { try connection.client() }

    func path(_ suffix: String = "") throws -> String {
        "/v1/admin/models/\(try ModelName(model))/versions/\(version)\(suffix)"
    }
}
