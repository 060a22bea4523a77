#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

extension UnsafeRawBufferPointer {
    /// Whether these bytes are `text`'s UTF-8, compared in place (no `String` made of them).
    func spells(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { $0.count == count && ($0.isEmpty || memcmp($0.baseAddress!, baseAddress!, count) == 0) }
    }
}
