import Foundation
import ModelDepotShared
import NIOCore

/// Request bodies in JSON, decoded with a `400` that says what is wrong and where.
enum JSONBody {
    static func decode<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch let error as DepotError {
            throw DepotError(.badRequest, "The JSON body is not valid: \(error.message)")
        } catch DecodingError.keyNotFound(let key, _) {
            throw DepotError(.badRequest, "The JSON body lacks the field '\(key.stringValue)'.")
        } catch DecodingError.typeMismatch(_, let where_), DecodingError.valueNotFound(_, let where_) {
            throw DepotError(.badRequest, "The JSON body has a wrong type at '\(path(where_.codingPath))': \(where_.debugDescription)")
        } catch DecodingError.dataCorrupted(let where_) {
            let underlying = (where_.underlyingError as? DepotError)?.message ?? where_.debugDescription
            guard where_.codingPath.isEmpty else {
                throw DepotError(.badRequest, "The JSON body has an invalid value at '\(path(where_.codingPath))': \(underlying)")
            }
            throw DepotError(.badRequest, "The body is not valid JSON: \(underlying)")
        }
    }

    /// A coding path as JSON names it: `events[0].at`.
    private static func path(_ keys: [any CodingKey]) -> String {
        keys.reduce(into: "") { path, key in
            if let index = key.intValue {
                path += "[\(index)]"
            } else {
                path += (path.isEmpty ? "" : ".") + key.stringValue
            }
        }
    }
}
