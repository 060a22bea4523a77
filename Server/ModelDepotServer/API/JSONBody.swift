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
            throw DepotError(.badRequest, Self.notDecodable(Data(buffer.readableBytesView)) ?? "The body is not valid JSON: \(underlying)")
        }
    }

    /// What is wrong with a body `JSONDecoder` calls "not valid JSON" without a path: where it is
    /// JSON, the first number (keys in order) that is no whole number of `Int`'s range, which
    /// Foundation on Linux reports so when a field takes a whole number; where it is not, the
    /// parser's own reason.
    private static func notDecodable(_ data: Data) -> String? {
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            let reason = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
            return reason.map { "The body is not valid JSON: \($0)" }
        }
        guard let (where_, number) = misfit(parsed, at: []) else { return nil }
        return
            "The JSON body has a number that does not fit its field: \(number.prefix(40)) at '\(where_.isEmpty ? "(the body)" : where_)'; whole numbers from \(Int.min) to \(Int.max) are expected."
    }

    private static func misfit(_ value: Any, at path: [any CodingKey]) -> (String, String)? {
        switch value {
        case let object as [String: Any]:
            for key in object.keys.sorted() {
                if let found = misfit(object[key] as Any, at: path + [Key(stringValue: key)]) { return found }
            }
        case let array as [Any]:
            for (index, element) in array.enumerated() {
                if let found = misfit(element, at: path + [Key(intValue: index)]) { return found }
            }
        case let number as NSNumber:
            let text = number.description
            if Int(text) == nil, text != "true", text != "false" { return (Self.path(path), text) }
        default: break
        }
        return nil
    }

    private struct Key: CodingKey {
        let stringValue: String
        let intValue: Int?
        init(stringValue: String) { (self.stringValue, intValue) = (stringValue, nil) }
        init(intValue: Int) { (stringValue, self.intValue) = ("\(intValue)", intValue) }
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
