import Foundation

/// A valid model whose own strings attack the operator's terminal: `described_classifier.tflite`
/// with strings of the same byte length swapped in. Its metadata name clears the screen and turns
/// red, a label file's name sets the terminal's title, and a tensor name reverses the text after it.
public enum HostileModelStrings {
    public static let replacements: [(original: String, hostile: String)] = [
        ("Described classifier", "\u{1B}[2J\u{1B}[31mDescribed c"),
        ("labels_en.txt", "\u{1B}]0;own\u{07}a.txt"),
        ("features", "\u{202E}feats"),
    ]

    /// `bytes` with every original string replaced wherever it occurs.
    /// - Throws: ``Missing`` when an original string is not in `bytes`.
    public static func apply(to bytes: [UInt8]) throws -> [UInt8] {
        var bytes = bytes
        for (original, hostile) in replacements {
            let from = Array(original.utf8), to = Array(hostile.utf8)
            precondition(from.count == to.count, "a replacement must keep the byte length")
            var replaced = 0
            var position = 0
            while position + from.count <= bytes.count {
                if bytes[position..<(position + from.count)].elementsEqual(from) {
                    bytes.replaceSubrange(position..<(position + from.count), with: to)
                    replaced += 1
                }
                position += 1
            }
            guard replaced > 0 else { throw Missing(original: original) }
        }
        return bytes
    }

    /// An original string that is not in the model.
    public struct Missing: Error, CustomStringConvertible {
        public let original: String
        public var description: String { "'\(original)' is not in the model" }
    }
}
