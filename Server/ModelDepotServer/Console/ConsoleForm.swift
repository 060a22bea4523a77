import Hummingbird
import ModelDepotShared

/// The fields of an `application/x-www-form-urlencoded` body, as the console's forms send them
/// (parsed by ``FormURLEncoded``; the first of a repeated name counts).
struct ConsoleForm {
    /// The largest form body read.
    static let maximumSize = 64 << 10

    let fields: [String: String]

    /// - Throws: ``DepotError`` (`payload_too_large`) for a body over ``maximumSize``.
    init(_ request: Request) async throws {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: Self.maximumSize)
        } catch {
            throw DepotError(.payloadTooLarge, "The form is larger than \(Self.maximumSize >> 10) KiB; nothing was changed.")
        }
        self.init(pairs: FormURLEncoded.pairs(buffer.readableBytesView))
    }

    init(pairs: [(name: String, value: String)]) {
        var fields: [String: String] = [:]
        for (name, value) in pairs where fields[name] == nil { fields[name] = value }
        self.fields = fields
    }

    subscript(name: String) -> String? { fields[name] }
}
