import Foundation
import Testing

@testable import ModelDepotServer
@testable import ModelDepotShared

/// Patches made by the server and applied as the device applies them: every pair comes back byte
/// for byte, and a damaged or hostile patch is refused with `invalid_patch`, never read past.
@Suite struct PatchTests {
    static func apply(_ patch: [UInt8], to old: [UInt8], newSize: Int) throws -> [UInt8] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("patch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("new")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        let applied = Result {
            try patch.withUnsafeBytes { patch in
                try old.withUnsafeBytes { old in
                    try Patch.apply(patch, to: old, newSize: newSize, output: handle, temporaryDirectory: directory)
                }
            }
        }
        try handle.close()
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["new"],
            "the streams' temporary files are gone, whether the patch applied or was refused")
        try applied.get()
        return try [UInt8](Data(contentsOf: output))
    }

    static func refusal(_ patch: [UInt8], to old: [UInt8], newSize: Int) -> DepotError? {
        do {
            _ = try apply(patch, to: old, newSize: newSize)
            return nil
        } catch {
            return error as? DepotError
        }
    }

    @Test func pairsComeBackByteForByte() throws {
        var generator = SystemRandomNumberGenerator()
        let random = (0..<50_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var edited = random
        edited.insert(contentsOf: [1, 2, 3, 4], at: 1_000)
        edited.removeSubrange(20_000..<20_100)
        let pairs: [(String, [UInt8], [UInt8])] = [
            ("empty to empty", [], []), ("empty to tiny", [], [9, 9]), ("tiny to empty", [7], []),
            ("edited", random, edited), ("shrunk", random, Array(random.prefix(100))), ("grown", Array(random.prefix(100)), random),
            ("labels added", try Fixtures.bytes("float_classifier"), try Fixtures.bytes("float_classifier_labels")),
        ]
        for (name, old, new) in pairs {
            let patch = try PatchMaker.patch(from: old, to: new).get()
            #expect(try Self.apply(patch, to: old, newSize: new.count) == new, "\(name)")
        }
        let patch = try PatchMaker.patch(from: random, to: edited).get()
        #expect(patch.count < 1_000, "a 4-byte insertion and a 100-byte cut: \(patch.count) bytes")
    }

    /// Streams and steps larger than the applier's 1 MiB buffers, and thousands of short steps:
    /// every byte lands where the steps say, whichever buffer boundary it crosses.
    @Test func stepsAcrossTheBuffersComeBackByteForByte() throws {
        var generator = SystemRandomNumberGenerator()
        func noise(_ count: Int) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count + 8)
            bytes.withUnsafeMutableBytes {
                for offset in stride(from: 0, to: count, by: 8) {
                    $0.storeBytes(of: generator.next(), toByteOffset: offset, as: UInt64.self)
                }
            }
            return Array(bytes.prefix(count))
        }
        let old = noise(3 << 20)
        let steps =
            [(added: 3 << 19, inserted: 700_000, seek: -(1 << 20))]
            + Array(repeating: (added: 37, inserted: 11, seek: 3), count: 5_000) + [
                (added: (1 << 20) + 13, inserted: (1 << 20) + 7, seek: 0)
            ]
        // Added bytes in runs: stretches of zeros and of other bytes, 1 to 64 bytes each.
        var added = noise(steps.reduce(0) { $0 + $1.added })
        var index = 0
        while index < added.count {
            let zeros = Int(added[index] & 63) + 1
            for zero in index..<min(index + zeros, added.count) { added[zero] = 0 }
            index += zeros + Int(added[min(index + zeros, added.count - 1)] & 63) + 1
        }
        // A stretch of other bytes across the first MiB written, where the output's buffer fills.
        for index in ((1 << 20) - 100)..<((1 << 20) + 100) { added[index] |= 1 }
        let inserted = noise(steps.reduce(0) { $0 + $1.inserted })
        var expected: [UInt8] = []
        var (oldOffset, addedOffset, insertedOffset) = (0, 0, 0)
        for step in steps {
            expected += (0..<step.added).map { added[addedOffset + $0] &+ old[oldOffset + $0] }
            expected += inserted[insertedOffset..<(insertedOffset + step.inserted)]
            (addedOffset, insertedOffset) = (addedOffset + step.added, insertedOffset + step.inserted)
            oldOffset += step.added + step.seek
        }
        let patch = Self.handMade(steps: steps, added: added, inserted: inserted, oldSize: old.count)
        #expect(ZeroRuns.encode(added).count > 1 << 20 && inserted.count > 1 << 20, "both streams outgrow a buffer")
        let applied = try Self.apply(patch, to: old, newSize: expected.count)
        #expect(applied.count == expected.count)
        #expect(applied.indices.first { applied[$0] != expected[$0] } == nil, "the first byte that differs")
    }

    @Test func damagedOrHostilePatchesAreRefused() throws {
        let old = try Fixtures.bytes("float_classifier")
        let new = try Fixtures.bytes("float_classifier_labels")
        let patch = try PatchMaker.patch(from: old, to: new).get()
        var badMagic = patch
        badMagic[0] = 0x4E
        var truncated = patch
        truncated.removeLast()
        var flipped = patch
        flipped[Patch.headerSize + 3] ^= 0xFF
        var lyingSteps = patch
        lyingSteps.replaceSubrange(24..<32, with: Patch.littleEndian(new.count + 5))
        let cases: [(String, [UInt8], [UInt8], Int)] = [
            ("bad magic", badMagic, old, new.count), ("truncated", truncated, old, new.count), ("damaged stream", flipped, old, new.count),
            ("too many steps", lyingSteps, old, new.count), ("another old file", patch, Array(old.dropLast()), new.count),
            ("another new size", patch, old, new.count + 1), ("empty", [], old, new.count),
        ]
        for (name, patch, old, size) in cases {
            #expect(Self.refusal(patch, to: old, newSize: size)?.code == .invalidPatch, "\(name)")
        }
        // A step that reads past the old file, in an otherwise well-formed patch.
        let outside = Self.handMade(steps: [(added: 10, inserted: 0, seek: 0)], added: [UInt8](repeating: 0, count: 10), inserted: [])
        #expect(Self.refusal(outside, to: [1, 2, 3], newSize: 10)?.code == .invalidPatch)
        let backwards = Self.handMade(
            steps: [(added: 0, inserted: 1, seek: -4), (added: 1, inserted: 0, seek: 0)], added: [0], inserted: [5])
        #expect(Self.refusal(backwards, to: [1, 2, 3], newSize: 2)?.code == .invalidPatch)
        // Runs of added bytes that lie: a count past 2^62, a count cut off, more or fewer bytes than the steps add.
        let step = [(added: 3, inserted: 0, seek: 0)]
        let runs: [(String, [UInt8])] = [
            ("a huge count", [UInt8](repeating: 0xFF, count: 9) + [0x7F, 0]), ("a cut count", [0x83]), ("runs left over", [3, 0, 5, 0]),
            ("too few", [1, 1, 9]), ("literals past the stream", [0, 200, 1, 2]),
        ]
        for (name, runs) in runs {
            #expect(
                Self.refusal(Self.handMade(steps: step, added: [], inserted: [], runs: runs), to: [1, 2, 3], newSize: 3)?.code
                    == .invalidPatch, "\(name)")
        }
        let honest = Self.handMade(steps: step, added: [], inserted: [], runs: [1, 2, 7, 9])
        #expect(Self.refusal(honest, to: [1, 2, 3], newSize: 3) == nil, "the same patch with honest runs applies")
    }

    @Test func aPatchInflatesToAtMostTwoAndAHalfTimesTheFileItMakes() {
        let old = [UInt8](repeating: 7, count: 102_400)
        func patch(stepping size: Int) -> [UInt8] {
            Self.handMade(
                steps: Array(repeating: (added: size, inserted: 0, seek: 0), count: old.count / size),
                added: [UInt8](repeating: 0, count: old.count), inserted: [], oldSize: old.count)
        }
        // One step per byte: 2.4 MB of controls (and as much disk while applying) for a 100 kB file.
        let refusal = Self.refusal(patch(stepping: 1), to: old, newSize: old.count)
        #expect(refusal?.code == .invalidPatch)
        #expect(refusal?.message.contains("its controls stream inflates past 321536 bytes") == true, "\(String(describing: refusal))")
        #expect(Self.refusal(patch(stepping: 64), to: old, newSize: old.count) == nil, "a step per 64 bytes applies")
    }

    @Test func runsOfZerosCostAlmostNothing() {
        #expect(ZeroRuns.encode([UInt8](repeating: 0, count: 1 << 20)).count <= 4)
        #expect(ZeroRuns.encode([]).isEmpty)
        let mixed: [UInt8] = [0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 7]
        #expect(ZeroRuns.encode(mixed) == [4, 3, 5, 0, 6, 3, 1, 7], "a zero inside a literal stretch stays a literal")
    }

    /// A patch of `steps`, its added bytes as runs (or `runs` as they are).
    static func handMade(
        steps: [(added: Int, inserted: Int, seek: Int)], added: [UInt8], inserted: [UInt8], runs: [UInt8]? = nil, oldSize: Int = 3
    ) -> [UInt8] {
        let controls = steps.flatMap { Patch.littleEndian($0.added) + Patch.littleEndian($0.inserted) + Patch.littleEndian($0.seek) }
        let streams = [controls, runs ?? ZeroRuns.encode(added), inserted].map { $0.withUnsafeBufferPointer { Deflater.compress($0) } }
        return Patch.Header(
            oldSize: oldSize, newSize: steps.reduce(0) { $0 + $1.added + $1.inserted }, steps: steps.count,
            controlsLength: streams[0].count, addedLength: streams[1].count, insertedLength: streams[2].count
        ).encoded
            + streams.joined()
    }
}
