/// Text the CLI did not write itself (metadata, tensor and file names, labels, notes, messages
/// naming them) made safe to print on a terminal: every character that could move the cursor,
/// start an escape sequence or reorder what is shown becomes a visible escape, `\e` style.
///
/// Escaped: C0 controls (U+0000–U+001F, so also line breaks and tabs inside one value), DEL,
/// C1 controls (U+0080–U+009F), the line and paragraph separators U+2028 and U+2029, and the
/// bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E, U+200F,
/// U+202A–U+202E, U+2066–U+2069). `"\u{1B}[2J"` prints as `\e[2J`, a tab as `\t`, the others
/// as `\u{…}`. JSON output does not go through this: its encoder escapes controls itself.
enum TerminalText {
    /// `text` with every character above written as a visible escape.
    static func escaped(_ text: some StringProtocol) -> String {
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x1B: result += "\\e"
            case 0x09: result += "\\t"
            case 0x0A: result += "\\n"
            case 0x0D: result += "\\r"
            case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069:
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Lines joined with line breaks, each escaped, so a line break inside one value cannot
    /// start a line of its own.
    static func lines(_ lines: [String]) -> String {
        lines.map(escaped).joined(separator: "\n")
    }
}
