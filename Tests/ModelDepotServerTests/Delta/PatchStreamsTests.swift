import Foundation
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotServer

/// Patches compressed while the steps come are the patches made from the whole streams at once,
/// byte for byte, and a patch over its limit stops early, with a size it could only exceed.
@Suite struct PatchStreamsTests {
    /// Random bytes with stretches repeated from earlier on (matches reaching back across blocks)
    /// and runs of zeros.
    static func mixed(_ count: Int, using generator: inout some RandomNumberGenerator) -> [UInt8] {
        var bytes: [UInt8] = []
        while bytes.count < count {
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: bytes += (0..<Int.random(in: 1...3_000, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            case 1 where bytes.count > 100:
                let from = Int.random(in: 0..<(bytes.count - 50), using: &generator)
                bytes += bytes[from..<min(bytes.count, from + Int.random(in: 3...2_000, using: &generator))]
            default: bytes += [UInt8](repeating: 0, count: Int.random(in: 1...500, using: &generator))
            }
        }
        return Array(bytes.prefix(count))
    }

    @Test func aStreamFedInPiecesCompressesAsOnePassDoesAndOnlyGrows() {
        var generator = SystemRandomNumberGenerator()
        let block = Deflater.blockSize
        for count in [0, 1, 2, block - 1, block, block + 1, block + 2, block + 3, 3 * block + 2, 150_000] {
            let input = Self.mixed(count, using: &generator)
            var stream = DeflateStream()
            var offset = 0, written = 0
            while offset < input.count {
                let piece = min(input.count - offset, Int.random(in: 0...40_000, using: &generator))
                stream.append(input[offset..<(offset + piece)])
                offset += piece
                #expect(stream.compressedCount >= written, "what is written only grows")
                written = stream.compressedCount
            }
            let whole = input.withUnsafeBufferPointer { Deflater.compress($0) }
            #expect(written <= whole.count)
            #expect(stream.finish() == whole, "\(count) bytes")
        }
    }

    @Test func zeroRunsEncodedUpToARecordsStartAndFromItAreTheRunsOfAll() {
        var generator = SystemRandomNumberGenerator()
        var cuts = 0
        for _ in 0..<300 {
            let bytes = (0..<Int.random(in: 0...200, using: &generator)).map { _ in
                Int.random(in: 0..<3, using: &generator) == 0 ? UInt8.random(in: 1...255, using: &generator) : 0
            }
            guard let cut = PatchStreams.recordStart(in: bytes) else { continue }
            cuts += 1
            #expect(
                ZeroRuns.encode(Array(bytes[..<cut])) + ZeroRuns.encode(Array(bytes[cut...])) == ZeroRuns.encode(bytes),
                "\(bytes) cut at \(cut)")
        }
        #expect(cuts > 100)
        #expect(PatchStreams.recordStart(in: [0, 0, 0, 5, 0, 0]) == nil, "three zeros after a byte that is not, or none")
        #expect(PatchStreams.recordStart(in: [7, 0, 0, 0, 9, 0, 0, 0]) == 5)
    }

    /// The patch as it was made before the streams were compressed as they came: every step
    /// collected, then each stream compressed whole.
    static func madeAtOnce(_ old: [UInt8], _ new: [UInt8]) -> [UInt8] {
        var controls: [UInt8] = [], added: [UInt8] = [], inserted: [UInt8] = []
        var steps = 0
        old.withUnsafeBufferPointer { old in
            new.withUnsafeBufferPointer { new in
                BinaryDiff.forEachStep(from: old, to: new) { step in
                    controls += Patch.encodedStep(added: step.added.count, inserted: step.inserted.count, seek: step.seek)
                    added += step.added
                    inserted += step.inserted
                    steps += 1
                }
            }
        }
        let streams = [controls, ZeroRuns.encode(added), inserted].map { $0.withUnsafeBufferPointer { Deflater.compress($0) } }
        let header = Patch.Header(
            oldSize: old.count, newSize: new.count, steps: steps, controlsLength: streams[0].count, addedLength: streams[1].count,
            insertedLength: streams[2].count)
        return header.encoded + streams.joined()
    }

    @Test func patchesAreTheBytesOfOnePassAndStopOnceOverTheLimit() throws {
        var generator = SystemRandomNumberGenerator()
        let old = Self.mixed(120_000, using: &generator)
        var edited = old
        for _ in 0..<2_000 { edited[Int.random(in: 0..<edited.count, using: &generator)] &+= 1 }
        edited.insert(contentsOf: Self.mixed(5_000, using: &generator), at: 60_000)
        let unrelated = (0..<100_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for new in [edited, unrelated] {
            let reference = Self.madeAtOnce(old, new)
            #expect(try PatchMaker.patch(from: old, to: new).get() == reference)
            // Pieces of the added stream small enough to be cut many times.
            var streams = PatchStreams(addedPiece: 64)
            old.withUnsafeBufferPointer { old in
                new.withUnsafeBufferPointer { new in BinaryDiff.forEachStep(from: old, to: new) { streams.append($0) } }
            }
            #expect(streams.finish(oldSize: old.count, newSize: new.count) == reference)
            #expect(try PatchMaker.patch(from: old, to: new, limit: reference.count).get() == reference, "a limit it meets")
        }

        // A new file of new bytes but for a stretch of the old file every 4 KiB (a model's shared
        // structure): each stretch ends a step, and the limit of 80 % stops the patch, about as
        // large as the file, before the steps have made all of it. (Without steps, as between
        // unrelated files, nothing is known before the end.)
        let noise = (0..<200_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let renewed = renewedBytes(from: noise, count: 600_000, using: &generator)
        let limit = PatchService.offerLimit(forFileOf: renewed.count)
        let whole = Self.madeAtOnce(noise, renewed).count
        #expect(whole > limit)
        guard case .failure(let stopped) = PatchMaker.patch(from: noise, to: renewed, limit: limit) else {
            Issue.record("a patch of \(whole) bytes was not stopped at \(limit)")
            return
        }
        #expect(stopped.atLeast > limit && stopped.atLeast <= whole)
        // Each stream holds back up to a block (32 KiB) until the bytes after it are in.
        #expect(stopped.newBytesDone < renewed.count * 95 / 100, "stopped after \(stopped.newBytesDone) of \(renewed.count) bytes")
    }
}
