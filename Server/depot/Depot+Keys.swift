import ArgumentParser
import Foundation
import ModelDepotShared

extension Depot {
    /// `depot keys create|list|revoke`.
    struct Keys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create, list and revoke admin tokens and app keys; manage the root and manifest-signing keys.",
            discussion: """
                Examples:
                  depot keys create --app --model flowers --name "iOS app"
                  depot keys list
                  depot keys revoke 4b1e9d07a2c3
                """,
            subcommands: [Create.self, List.self, Revoke.self, Root.self, Rotate.self]
        )

        struct Create: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Create an admin token, or with --app a read-only app key.",
                discussion: """
                    Examples:
                      depot keys create --name "CI pipeline"
                      depot keys create --app --model flowers --name "iOS app"
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Flag(help: "Create a read-only app key (for the SDK) instead of an admin token.") var app = false
            @Option(help: "A label for people.") var name: String?
            @Option(help: "Limit an app key to this model; repeat for several.") var model: [String] = []
            @Flag(help: "Print JSON: {\"id\", \"secret\", ...}.") var json = false

            func run() async throws {
                if !app, !model.isEmpty { throw ValidationError("--model limits app keys only; add --app.") }
                let creation = AccessKeyCreation(
                    kind: app ? .app : .admin, name: name,
                    models: model.isEmpty ? nil : try model.map { name throws(DepotError) in try ModelName(name) })
                let key = try await connection.client().post("/v1/admin/keys", json: creation, as: CreatedAccessKey.self)
                print(
                    json
                        ? try JSONOutput.string(key)
                        : "Created \(key.kind.rawValue) key \(key.id). Its secret, shown only now:\n\n    \(key.secret)\n")
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "List keys (never their secrets).",
                discussion: """
                    Examples:
                      depot keys list
                      depot keys list --json
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Flag(help: "Print JSON.") var json = false

            func run() async throws {
                let list = try await connection.client().get("/v1/admin/keys", as: AccessKeyList.self)
                if json { return print(try JSONOutput.string(list)) }
                print(
                    TextTable(
                        ["ID", "KIND", "NAME", "MODELS", "CREATED", "REVOKED"],
                        list.keys.map {
                            [
                                $0.id, $0.kind.rawValue, $0.name, $0.models?.map(\.rawValue).joined(separator: ",") ?? "all",
                                $0.createdAt.formatted(.iso8601), $0.revokedAt?.formatted(.iso8601) ?? "-",
                            ]
                        }
                    ).rendered)
            }
        }

        struct Revoke: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Revoke a key at once.",
                discussion: """
                    Examples:
                      depot keys revoke 4b1e9d07a2c3
                    """
            )
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "The key's id.") var id: String

            func run() async throws {
                try await connection.client().delete(
                    "/v1/admin/keys/\(id.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? id)")
                print("Revoked key \(id).")
            }
        }
    }
}
