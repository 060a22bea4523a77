import ArgumentParser
import Foundation
import ModelDepotShared

extension Depot {
    /// `depot gc`: removes blobs no version references, through the server.
    struct Gc: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove blobs no version references, and uploads abandoned for a day, now.",
            discussion: """
                Examples:
                  depot gc --dry-run
                  depot gc

                The server does this every hour by itself; this asks it (or, behind a load balancer, one replica)
                to do it at once. Blobs are removed under the collection lock after the references are read again, so
                a blob an upload is storing stays. Works the same for files under the storage directory and for an
                object store.
                """
        )

        @OptionGroup var connection: ConnectionOptions

        @Flag(help: "Remove nothing: list what would be removed.")
        var dryRun = false

        @Flag(help: "Print JSON.")
        var json = false

        func run() async throws {
            let result = try await connection.client().post(
                "/v1/admin/blobs/collect" + (dryRun ? "?dryRun=true" : ""), as: BlobCollection.self)
            if json {
                print(try JSONOutput.string(result))
                return
            }
            let verb = dryRun ? "Would remove" : "Removed"
            print(
                "\(verb) \(result.removedBlobs.count) blob(s) no version references"
                    + (dryRun ? "." : ", and \(result.removedUploads) abandoned upload(s)."))
            for digest in result.removedBlobs { print("  \(digest)") }
        }
    }
}
