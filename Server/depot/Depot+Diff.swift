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
                an update by patch would cost devices. A patch over 80% of the new file is not offered. Between two TFLite
                models, each tensor whose weights changed a little is added to its old self, wherever either moved; the
                output says how many. Exits 1 for a file that cannot be read.
                """
        )

        @Argument(help: "The file devices hold.") var old: String
        @Argument(help: "The file of the new version.") var new: String
        @Option(help: "Write the patch to this file.") var out: String?
        @Flag(help: "Stop as the server does, as soon as the patch is known to be over 80% of the new file.") var stopOverLimit = false
        @Flag(help: "Print JSON (oldSize, newSize, patchSize, share, offered, stopped, seconds, alignedTensors).") var json = false

        struct Result: Codable {
            var oldSize: Int
            var newSize: Int
            /// The patch's size; when stopped, the bytes it had reached (it would be larger).
            var patchSize: Int
            /// The patch's size as a share of the new file (0 to 1 and more).
            var share: Double
            var offered: Bool
            /// Whether it was stopped over the limit (`--stop-over-limit`).
            var stopped: Bool
            var seconds: Double
            /// How many changed tensors of a TFLite model the patch adds to their old selves.
            var alignedTensors: Int
        }

        func validate() throws {
            if stopOverLimit, out != nil { throw ValidationError("--out writes the whole patch; leave out --stop-over-limit.") }
        }

        func run() throws {
            let sizes = try [old, new].map { path throws(DepotError) in try MappedFile(path: path).count }
            let start = ContinuousClock.now
            let (made, alignedTensors) = try PatchMaker.patchCountingAlignedTensors(
                fromFileAt: old, toFileAt: new, limit: stopOverLimit ? PatchService.offerLimit(forFileOf: sizes[1]) : .max)
            let elapsed = ContinuousClock.now - start
            let (size, stopped): (Int, Bool)
            switch made {
            case .success(let patch):
                (size, stopped) = (patch.count, false)
                if let out {
                    guard FileManager.default.createFile(atPath: out, contents: Data(patch)) else {
                        throw DepotError(.fileUnreadable, "Could not write the patch to '\(out)'.")
                    }
                }
            case .failure(let overLimit): (size, stopped) = (overLimit.atLeast, true)
            }
            let share = sizes[1] > 0 ? Double(size) / Double(sizes[1]) : 1
            let result = Result(
                oldSize: sizes[0], newSize: sizes[1], patchSize: size, share: share,
                offered: size <= PatchService.offerLimit(forFileOf: sizes[1]), stopped: stopped,
                seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
                alignedTensors: alignedTensors)
            if json { return print(try JSONOutput.string(result)) }
            let verb = stopped ? "stopped over 80% in" : "made in"
            let aligned =
                switch result.alignedTensors {
                case 0: ""
                case 1: "; 1 changed tensor added to its old self"
                case let count: "; \(count) changed tensors added to their old selves"
                }
            print(
                String(
                    format: "patch: %@%d bytes, %.2f%% of the new file's %d (%@ %.2f s%@); %@", stopped ? "over " : "", size, share * 100,
                    sizes[1], verb, result.seconds, aligned,
                    result.offered
                        ? "devices holding the old file would download it instead of the file"
                        : "over 80%: not offered, devices would download the file"))
        }
    }
}
