import Foundation
import Hummingbird
import ModelDepotShared

/// The fields of an `application/x-www-form-urlencoded` body, as the console's forms send them.
struct ConsoleForm {
    /// The largest form body read.
    static let maximumSize = 64 << 10

    let fields: [String: String]

    init(_ request: Request) async throws {
        let body = request.body
        let buffer = try await body.collect(upTo: Self.maximumSize)
        var components = URLComponents()
        components.percentEncodedQuery = String(buffer: buffer).replacingOccurrences(of: "+", with: "%20")
        var fields: [String: String] = [:]
        for item in components.queryItems ?? [] where fields[item.name] == nil { fields[item.name] = item.value ?? "" }
        self.fields = fields
    }

    subscript(name: String) -> String? { fields[name] }
}
