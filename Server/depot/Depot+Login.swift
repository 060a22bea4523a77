import ArgumentParser
import Foundation
import ModelDepotShared

extension Depot {
    /// `depot login`: checks a server URL and token, then saves them for later commands.
    struct Login: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Save the server URL and admin token for later commands (checked against the server first).",
            discussion: """
                Examples:
                  depot login --server https://models.example.com --token "$(cat admin-token.txt)"
                """
        )

        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            let client = try connection.client(environment: environment)
            _ = try await client.get("/v1/admin/keys", as: AccessKeyList.self)
            try CLIConfiguration(server: client.server.absoluteString, token: client.token).save(environment: environment)
            print("Logged in to \(client.server.absoluteString); saved to \(CLIConfiguration.path(environment: environment)).")
        }
    }
}
