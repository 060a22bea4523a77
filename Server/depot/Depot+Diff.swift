import ArgumentParser
import Foundation
import ModelDepotServer
import ModelDepotShared

extension Depot {
    /// `depot diff OLD NEW`: the patch the server would offer devices holding OLD when NEW is
    /// published, and what it saves.
    struct Diff: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make the patch the server would make from one model file to the next, and show how much of the file it is.",
            discussion: """
                Examples:
                  depot diff flowers-7.tflite flowers-8.tflite
                  depot diff flowers-7.tflite flowers-8.tflite --out flowers-7-to-8.patch

                The server makes these patches itself after a publish (depot serve --patch-from); this shows beforehand what
                an update by patch would cost devices. A patch over 80% of the new file is not offered. Exits 1 for a file
                that cannot be read.
                """
        )

        @Argument(help: "The file devices hold.") var old: String
        @Argument(help: "The file of the new version.") var new: String
        @Option(help: "Write the patch to this file.") var out: String?
        @Flag(help: "Print JSON (oldSize, newSize, patchSize, share, offered, seconds).") var json = false

        struct Result: Codable {
            var oldSize: Int
            var newSize: Int
            var patchSize: Int
            /// The patch's size as a share of the new file (0 to 1 and more).
            var share: Double
            var offered: Bool
            var seconds: Double
        }

        func run() throws {
            let start = ContinuousClock.now
            let patch = try PatchMaker.patch(fromFileAt: old, toFileAt: new)
            let elapsed = ContinuousClock.now - start
            let sizes = try [old, new].map { path throws(DepotError) in try MappedFile(path: path).count }
            if let out {
                guard FileManager.default.createFile(atPath: out, contents: Data(patch)) else {
                    throw DepotError(.fileUnreadable, "Could not write the patch to '\(out)'.")
                }
            }
            let share = sizes[1] > 0 ? Double(patch.count) / Double(sizes[1]) : 1
            let result = Result(
                oldSize: sizes[0], newSize: sizes[1], patchSize: patch.count, share: share,
                offered: share <= PatchService.largestOffered,
                seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            if json { return print(try JSONOutput.string(result)) }
            print(
                String(
                    format: "patch: %d bytes, %.2f%% of the new file's %d (made in %.2f s); %@", patch.count, share * 100, sizes[1],
                    result.seconds,
                    result.offered
                        ? "devices holding the old file would download it instead of the file"
                        : "over 80%: not offered, devices would download the file"))
        }
    }
}
