import Foundation
import ModelDepotShared

/// The weights that changed a little between two versions of a TFLite model, lined up: each
/// tensor of the new file whose data differs from the same tensor of the old (the same subgraph,
/// name, type and size), where the bytes it adds to the old ones cost fewer bits than its own.
///
/// A fine-tuned or quantised-again weight keeps its sign, exponent or high bits, so its bytes
/// less the old ones are mostly small numbers; but no stretch of them repeats in the old file,
/// so ``BinaryDiff``'s search finds nothing to add them to and inserts them as they are. Taking
/// each such tensor as an anchor (added to its old self, wherever either moved) is what a
/// search cannot find: it knows the format. Unchanged tensors are left to the search, which
/// finds them whole.
enum TensorAnchors {
    /// The anchors from `old` to `new`, by their place in the new file, never overlapping; none
    /// when either is not a valid model.
    static func between(_ old: UnsafeBufferPointer<UInt8>, _ new: UnsafeBufferPointer<UInt8>) -> [BinaryDiff.Anchor] {
        let verifier = TFLiteVerifier()
        guard let oldTensors = try? verifier.constantTensors(in: UnsafeRawBufferPointer(old)),
            let newTensors = try? verifier.constantTensors(in: UnsafeRawBufferPointer(new))
        else { return [] }
        var anchors: [BinaryDiff.Anchor] = []
        var pairedOld = Set<Range<Int>>(), pairedNew = Set<Range<Int>>()
        // By name first; then, a converter having renamed what it fused, by the operator input
        // that first reads it.
        for key in [Key.byName, Key.byFirstUse] {
            let oldByKey = Dictionary(grouping: oldTensors.filter { !pairedOld.contains($0.data) }, by: key)
            for (value, tensors) in Dictionary(grouping: newTensors.filter { !pairedNew.contains($0.data) }, by: key) {
                // A key two tensors share says nothing about which is which.
                guard let value, tensors.count == 1, let tensor = tensors.first, let match = oldByKey[value], match.count == 1,
                    let from = match.first, tensor.data.count == from.data.count, tensor.data.upperBound <= new.count,
                    from.data.upperBound <= old.count
                else { continue }
                pairedOld.insert(from.data)
                pairedNew.insert(tensor.data)
                let newBytes = UnsafeBufferPointer(rebasing: new[tensor.data])
                let oldBytes = UnsafeBufferPointer(rebasing: old[from.data])
                guard !newBytes.elementsEqual(oldBytes), addingCostsLess(newBytes, oldBytes, lanes: elementBytes(tensor.type)) else {
                    continue
                }
                anchors.append(BinaryDiff.Anchor(new: tensor.data, old: from.data.lowerBound))
            }
        }
        anchors.sort { $0.new.lowerBound < $1.new.lowerBound }
        var kept: [BinaryDiff.Anchor] = []
        for anchor in anchors where kept.last.map({ $0.new.upperBound <= anchor.new.lowerBound }) ?? true { kept.append(anchor) }
        return kept
    }

    /// Whether `new`'s bytes less `old`'s take fewer bits than `new`'s own, by each one's order-0
    /// entropy in `lanes` lanes (a byte's place in its element: an exponent byte and a mantissa
    /// byte are different sources).
    static func addingCostsLess(_ new: UnsafeBufferPointer<UInt8>, _ old: UnsafeBufferPointer<UInt8>, lanes: Int) -> Bool {
        var own = [Int](repeating: 0, count: 256 * lanes)
        var added = [Int](repeating: 0, count: 256 * lanes)
        for index in 0..<new.count {
            let lane = (index % lanes) << 8
            own[lane | Int(new[index])] += 1
            added[lane | Int(new[index] &- old[index])] += 1
        }
        return bits(added, lanes: lanes) < bits(own, lanes: lanes)
    }

    /// The bits an order-0 code of each lane's counts needs, all lanes together.
    static func bits(_ counts: [Int], lanes: Int) -> Double {
        var total = 0.0
        for lane in 0..<lanes {
            let slice = counts[(lane << 8)..<((lane + 1) << 8)]
            let sum = Double(slice.reduce(0, +))
            for count in slice where count > 0 { total -= Double(count) * log2(Double(count) / sum) }
        }
        return total
    }

    /// What pairs a tensor with its old self: its subgraph, type and size, and its name or the
    /// input that first reads it (`nil`: none does).
    private struct Key: Hashable {
        let subgraph: Int
        let type: TFLiteTensorType
        let size: Int
        let name: String
        let use: TFLiteConstantTensor.Use?

        static func byName(_ tensor: TFLiteConstantTensor) -> Key? {
            Key(subgraph: tensor.subgraph, type: tensor.type, size: tensor.data.count, name: tensor.name, use: nil)
        }

        static func byFirstUse(_ tensor: TFLiteConstantTensor) -> Key? {
            tensor.firstUse.map { Key(subgraph: tensor.subgraph, type: tensor.type, size: tensor.data.count, name: "", use: $0) }
        }
    }

    /// The bytes of one element, 1 to 8 (a byte for packed or unsized types).
    static func elementBytes(_ type: TFLiteTensorType) -> Int { min(8, max(1, (type.bitsPerElement ?? 8) / 8)) }
}
