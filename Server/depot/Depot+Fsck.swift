import ArgumentParser
import Foundation
import ModelDepotServer
import ModelDepotShared

extension Depot {
    /// `depot fsck [--storage DIR] [--json]`: hashes every blob again and reports damage.
    struct Fsck: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a storage directory: hash every blob a version references again and report missing or changed files.",
            discussion: """
                Examples:
                  depot fsck
                  depot fsck --storage /var/lib/modeldepot --json

                Reads the storage directly (the catalog is only read; the server may keep running). Exits 0 when every
                blob is whole, 1 when one is missing, of another size or changed (restore those from a backup),
                and 1 for a directory that holds no ModelDepot storage. Files no version references are listed;
                the server removes them at its next start or collection ('depot gc' at once).
                """
        )

        @Option(help: "The storage directory (default: DEPOT_STORAGE, else ./storage).")
        var storage: String?

        @Flag(help: "Print JSON (blobs with sha256, size, models and problem; unreferenced).")
        var json = false

        func run() async throws {
            let directory = storage ?? ProcessInfo.processInfo.environment["DEPOT_STORAGE"] ?? "storage"
            let report = try await StorageCheck.run(storage: directory)
            if json {
                print(try JSONOutput.string(report))
            } else {
                print(Self.text(report))
            }
            if !report.damaged.isEmpty { throw ExitCode(1) }
        }

        static func text(_ report: StorageReport) -> String {
            var lines = [
                "\(report.blobs.count) blob(s) checked, \(report.damaged.count) damaged, \(report.unreferenced.count) unreferenced."
            ]
            if !report.damaged.isEmpty {
                lines.append("")
                lines.append(
                    TextTable(
                        ["SHA256", "MODELS", "PROBLEM"],
                        report.damaged.map { [$0.sha256, $0.models.joined(separator: ","), $0.problem ?? ""] }
                    ).rendered)
                lines.append("")
                lines.append("Restore these files from a backup; until then the server answers 500 for them.")
            }
            for digest in report.unreferenced { lines.append("unreferenced: \(digest) (removed on the server's next start)") }
            return lines.joined(separator: "\n")
        }
    }
}
