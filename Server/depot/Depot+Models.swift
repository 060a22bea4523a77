import ArgumentParser
import Foundation
import ModelDepotShared

extension Depot {
    /// `depot models create|list|show|delete`.
    struct Models: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create, list, show and delete models.",
            discussion: """
                Examples:
                  depot models create flowers --description "Flower classifier" --tag vision
                  depot models list
                  depot models show flowers
                """,
            subcommands: [Create.self, List.self, Show.self, Delete.self]
        )

        struct Create: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Create a model.",
                discussion: """
                    Examples:
                      depot models create flowers
                      depot models create flowers --description "Flower classifier" --tag vision --tag mobile
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "The model's name: 1-64 of a-z, 0-9, '.', '_', '-'.") var name: String
            @Option(help: "A description for people.") var description: String?
            @Option(help: "A tag; repeat for several.") var tag: [String] = []
            @Flag(help: "Print JSON.") var json = false

            func run() async throws {
                let creation = ModelCreation(name: try ModelName(name), description: description, tags: tag.isEmpty ? nil : tag)
                let model = try await connection.client().post("/v1/admin/models", json: creation, as: ModelSummary.self)
                print(json ? try JSONOutput.string(model) : "Created model '\(model.name)'.")
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "List models.",
                discussion: """
                    Examples:
                      depot models list
                      depot models list --json
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Flag(help: "Print JSON.") var json = false

            func run() async throws {
                let list = try await connection.client().get("/v1/admin/models", as: ModelList.self)
                if json { return print(try JSONOutput.string(list)) }
                print(
                    TextTable(
                        ["NAME", "VERSIONS", "LATEST", "PUBLISHED", "TAGS", "DESCRIPTION"],
                        list.models.map {
                            [
                                $0.name.rawValue, "\($0.versionCount)", $0.latestVersion.map { "\($0)" } ?? "-",
                                $0.publishedVersion.map { "\($0)" } ?? "-", $0.tags.joined(separator: ","), $0.description,
                            ]
                        }
                    ).rendered)
            }
        }

        struct Show: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Show a model.",
                discussion: """
                    Examples:
                      depot models show flowers
                      depot models show flowers --json
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "The model's name.") var name: String
            @Flag(help: "Print JSON.") var json = false

            func run() async throws {
                let model = try await connection.client().get("/v1/admin/models/\(try ModelName(name))", as: ModelSummary.self)
                if json { return print(try JSONOutput.string(model)) }
                print(
                    """
                    name:        \(model.name)
                    description: \(TerminalText.escaped(model.description))
                    tags:        \(model.tags.joined(separator: ", "))
                    created:     \(model.createdAt.formatted(.iso8601))
                    versions:    \(model.versionCount) (latest \(model.latestVersion.map { "\($0)" } ?? "-"), published \(model.publishedVersion.map { "\($0)" } ?? "-"))
                    """)
            }
        }

        struct Delete: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Delete a model; --force also deletes its versions.",
                discussion: """
                    Examples:
                      depot models delete flowers
                      depot models delete flowers --force
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "The model's name.") var name: String
            @Flag(help: "Delete the model even if it has versions.") var force = false

            func run() async throws {
                try await connection.client().delete("/v1/admin/models/\(try ModelName(name))\(force ? "?force=true" : "")")
                print("Deleted model '\(name)'.")
            }
        }
    }
}
