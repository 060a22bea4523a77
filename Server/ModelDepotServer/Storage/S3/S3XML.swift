/// The little of XML that S3's answers need: the text of named elements, and the blocks of
/// repeated ones (`<Contents>…</Contents>`). S3 answers are flat, attribute-free documents.
enum S3XML {
    /// The text of every `<name>…</name>` in `xml`, entities decoded.
    static func values(_ name: String, in xml: Substring) -> [String] {
        blocks(name, in: xml).map { decodeEntities($0) }
    }

    static func value(_ name: String, in xml: Substring) -> String? {
        values(name, in: xml).first
    }

    /// What every `<name>…</name>` in `xml` holds (nested elements included).
    static func blocks(_ name: String, in xml: Substring) -> [Substring] {
        let open = "<\(name)>", close = "</\(name)>"
        var found: [Substring] = []
        var rest = xml
        while let start = rest.range(of: open), let end = rest[start.upperBound...].range(of: close) {
            found.append(rest[start.upperBound..<end.lowerBound])
            rest = rest[end.upperBound...]
        }
        return found
    }

    static func decodeEntities(_ text: Substring) -> String {
        guard text.contains("&") else { return String(text) }
        return text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&#34;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
