/// One condition of a rollout rule, e.g. `platform=ios`, `appVersion>=3.2.0`,
/// `country in US,CA`, `attributes.tier prefix gold`, `attributes.age>=18`.
///
/// Fields: `platform`, `appVersion`, `osVersion`, `sdkVersion` (ordered as semantic
/// versions), `country`, and `attributes.<key>` (text; ordered numerically). A device that does
/// not send a field matches no condition on it.
///
/// ```swift
/// let condition = try RolloutCondition(parsing: "appVersion>=3.2.0")
/// condition.matches(DeviceContext(appVersion: "3.10.1"))   // true
/// ```
public struct RolloutCondition: Sendable, Hashable, Codable, CustomStringConvertible {
    /// How the field is compared with the values.
    public enum Operator: String, Sendable, Hashable, Codable, CaseIterable {
        case equals = "="
        case notEquals = "!="
        case `in` = "in"
        case prefix = "prefix"
        case greaterThan = ">"
        case greaterThanOrEqual = ">="
        case lessThan = "<"
        case lessThanOrEqual = "<="

        var isOrdering: Bool { [.greaterThan, .greaterThanOrEqual, .lessThan, .lessThanOrEqual].contains(self) }
    }

    /// The field: `platform`, `appVersion`, `osVersion`, `sdkVersion`, `country` or `attributes.<key>`.
    public var field: String
    /// The comparison.
    public var op: Operator
    /// One value, or several for `in`.
    public var values: [String]

    static let versionFields: Set = ["appVersion", "osVersion", "sdkVersion"]
    static let textFields: Set = ["platform", "country"]

    /// Creates and checks a condition.
    /// - Throws: ``DepotError`` (`bad_request`) for an unknown field, a missing value, an
    ///   operator the field cannot use, or a value that is not a version or number where one is needed.
    public init(field: String, op: Operator, values: [String]) throws(DepotError) {
        self.field = field
        self.op = op
        self.values = field == "platform" ? values.map { $0.lowercased() } : field == "country" ? values.map { $0.uppercased() } : values
        try validate()
    }

    /// Parses `field=value`, `field!=value`, `field>=value` (and `>`, `<`, `<=`),
    /// `field in a,b,c` and `field prefix value`.
    /// - Throws: ``DepotError`` (`bad_request`) saying what is wrong and the accepted forms.
    public init(parsing text: String) throws(DepotError) {
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        if words.count == 3, let op = Operator(rawValue: String(words[1])), op == .in || op == .prefix {
            try self.init(field: String(words[0]), op: op,
                          values: op == .in ? words[2].split(separator: ",").map(String.init) : [String(words[2])])
            return
        }
        for op in [Operator.notEquals, .greaterThanOrEqual, .lessThanOrEqual, .equals, .greaterThan, .lessThan] {
            if let range = text.range(of: op.rawValue) {
                let field = text[..<range.lowerBound].trimmingCharacters(in: " ")
                let value = text[range.upperBound...].trimmingCharacters(in: " ")
                try self.init(field: field, op: op, values: [value])
                return
            }
        }
        throw DepotError(.badRequest, "Condition '\(text)' is not understood; write e.g. 'platform=ios', 'appVersion>=3.2.0', 'country in US,CA' or 'attributes.tier prefix gold'.")
    }

    public var description: String {
        op == .in || op == .prefix ? "\(field) \(op.rawValue) \(values.joined(separator: ","))" : "\(field)\(op.rawValue)\(values.joined())"
    }

    /// Whether a device meets the condition.
    public func matches(_ device: DeviceContext) -> Bool {
        guard let actual = value(of: device) else { return false }
        switch op {
        case .equals: return actual == values[0]
        case .notEquals: return actual != values[0]
        case .in: return values.contains(actual)
        case .prefix: return actual.hasPrefix(values[0])
        default: return ordered(actual)
        }
    }

    private func value(of device: DeviceContext) -> String? {
        switch field {
        case "platform": device.platform
        case "appVersion": device.appVersion
        case "osVersion": device.osVersion
        case "sdkVersion": device.sdkVersion
        case "country": device.country
        default: device.attributes[String(field.dropFirst("attributes.".count))]
        }
    }

    private func ordered(_ actual: String) -> Bool {
        if Self.versionFields.contains(field) {
            guard let left = try? SemanticVersion(actual), let right = try? SemanticVersion(values[0]) else { return false }
            return compare(left, right)
        }
        guard let left = Double(actual), let right = Double(values[0]) else { return false }
        return compare(left, right)
    }

    private func compare<T: Comparable>(_ left: T, _ right: T) -> Bool {
        switch op {
        case .greaterThan: left > right
        case .greaterThanOrEqual: left >= right
        case .lessThan: left < right
        default: left <= right
        }
    }

    private func validate() throws(DepotError) {
        let isAttribute = field.hasPrefix("attributes.") && field.count > "attributes.".count
        guard Self.versionFields.contains(field) || Self.textFields.contains(field) || isAttribute else {
            throw DepotError(.badRequest, "Condition field '\(field)' is unknown; use platform, appVersion, osVersion, sdkVersion, country or attributes.<key>.")
        }
        guard !values.isEmpty, values.allSatisfy({ !$0.isEmpty }), op == .in || values.count == 1 else {
            throw DepotError(.badRequest, "Condition on '\(field)' needs \(op == .in ? "one or more values" : "exactly one value") for '\(op.rawValue)'.")
        }
        guard op.isOrdering else { return }
        if Self.textFields.contains(field) {
            throw DepotError(.badRequest, "'\(field)' cannot be compared with '\(op.rawValue)'; use =, !=, in or prefix.")
        }
        if Self.versionFields.contains(field) {
            _ = try SemanticVersion(values[0])
        } else if Double(values[0]) == nil {
            throw DepotError(.badRequest, "'\(values[0])' is not a number, so '\(field)' cannot be compared with '\(op.rawValue)'; use a number or =, !=, in, prefix.")
        }
    }
}

extension Substring {
    func trimmingCharacters(in set: Character) -> String {
        String(drop { $0 == set }.reversed().drop { $0 == set }.reversed())
    }
}
