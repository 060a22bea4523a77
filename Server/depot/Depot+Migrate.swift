import ArgumentParser
import Foundation
import ModelDepotServer
import ModelDepotShared

extension Depot {
    /// `depot migrate`: moves a one-server deployment into PostgreSQL and an S3 store.
    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move a storage directory's catalog and blobs into PostgreSQL and an S3-compatible store.",
            discussion: """
                Examples:
                  depot migrate --to-database postgres://depot:secret@db/depot --to-blobs s3://models/prod

                Every blob is hashed again on its way into the store; then models, versions (with their numbers and
                dates), rollouts and their history, keys, usage, root documents and the online manifest key are written
                in one transaction. The storage directory is only read: stop the server first so nothing changes
                meanwhile. The target database must be empty, and the store may hold only blobs of this catalog (from
                a migration that stopped half-way). The store's endpoint, region and credentials come from the AWS
                environment variables, as for 'depot serve --blobs'.
                """
        )

        @Option(help: "The storage directory to move (default: DEPOT_STORAGE, else ./storage).")
        var from: String?

        @Option(
            help:
                "The target catalog: postgres://USER:PASSWORD@HOST:PORT/DATABASE[?sslmode=disable|prefer|require] (TLS required unless the host is this machine)."
        )
        var toDatabase: String

        @Option(help: "The target store: s3://BUCKET[/PREFIX].")
        var toBlobs: String

        @Option(name: .customLong("s3-endpoint"), help: "The store's endpoint, overriding AWS_ENDPOINT_URL_S3 and AWS_ENDPOINT_URL.")
        var s3Endpoint: String?

        @Option(name: .customLong("s3-region"), help: "The store's region, overriding AWS_REGION.")
        var s3Region: String?

        @Flag(help: "Print JSON.")
        var json = false

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            let storage = from ?? environment["DEPOT_STORAGE"] ?? "storage"
            let database = try PostgresLocation(url: toDatabase)
            let blobs = try S3Location(url: toBlobs, environment: environment, endpoint: s3Endpoint, region: s3Region)
            let report = try await DeploymentMigration.run(storage: storage, database: database, blobs: blobs) { step in
                if !json { FileHandle.standardError.write(Data((step + "\n").utf8)) }
            }
            if json {
                print(try JSONOutput.string(report))
            } else {
                print(
                    "Moved \(report.models) model(s), \(report.versions) version(s), \(report.keys) key(s) and \(report.blobs) blob(s) (\(report.bytes) bytes) into \(database) and \(blobs)."
                )
            }
        }
    }
}
