/// An installation id as buckets, exposure tokens and the catalog read it: in lower case.
enum InstallationID {
    /// The UTF-8 bytes of `id` in lower case, without making a new text when `id` is ASCII (every
    /// SDK's id).
    static func lowercasedUTF8(_ id: String) -> LazyMapSequence<String.UTF8View, UInt8> {
        let text = id.utf8.allSatisfy { $0 < 0x80 } ? id : id.lowercased()
        return text.utf8.lazy.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0 }
    }
}
