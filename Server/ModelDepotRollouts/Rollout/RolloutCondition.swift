import ModelDepotShared

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
    public let field: String
    /// The comparison.
    public let op: Operator
    /// One value, or several for `in`.
    public let values: [String]
    /// The value of an ordering comparison, parsed once.
    private let threshold: Threshold?
    /// The device field, resolved once.
    private let source: Source

    private enum Source: Sendable, Hashable {
        case platform, appVersion, osVersion, sdkVersion, country
        case attribute(String)

        init(_ field: String) {
            switch field {
            case "platform": self = .platform
            case "appVersion": self = .appVersion
            case "osVersion": self = .osVersion
            case "sdkVersion": self = .sdkVersion
            case "country": self = .country
            default: self = .attribute(String(field.dropFirst("attributes.".count)))
            }
        }
    }

    private enum Threshold: Sendable, Hashable {
        case version(SemanticVersion)
        case number(Double)
    }

    private enum CodingKeys: String, CodingKey { case field, op, values }

    static let versionFields: Set = ["appVersion", "osVersion", "sdkVersion"]
    static let textFields: Set = ["platform", "country"]

    /// Creates and checks a condition.
    /// - Throws: ``DepotError`` (`bad_request`) for an unknown field, a missing value, an
    ///   operator the field cannot use, or a value that is not a version or number where one is needed.
    public init(field: String, op: Operator, values: [String]) throws(DepotError) {
        self.field = field
        self.op = op
        self.values = field == "platform" ? values.map { $0.lowercased() } : field == "country" ? values.map { $0.uppercased() } : values
        threshold = try Self.validate(field: field, op: op, values: self.values)
        source = Source(field)
    }

    /// Decodes and checks a stored or sent condition.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            field: try container.decode(String.self, forKey: .field), op: try container.decode(Operator.self, forKey: .op),
            values: try container.decode([String].self, forKey: .values))
    }

    /// Whether the condition is on a device attribute (`attributes.…`).
    public var readsAttribute: Bool {
        if case .attribute = source { true } else { false }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(field, forKey: .field)
        try container.encode(op, forKey: .op)
        try container.encode(values, forKey: .values)
    }

    /// Parses `field=value`, `field!=value`, `field>=value` (and `>`, `<`, `<=`),
    /// `field in a,b,c` and `field prefix value`.
    /// - Throws: ``DepotError`` (`bad_request`) saying what is wrong and the accepted forms.
    public init(parsing text: String) throws(DepotError) {
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        if words.count == 3, let op = Operator(rawValue: String(words[1])), op == .in || op == .prefix {
            try self.init(
                field: String(words[0]), op: op,
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
        throw DepotError(
            .badRequest,
            "Condition '\(text)' is not understood; write e.g. 'platform=ios', 'appVersion>=3.2.0', 'country in US,CA' or 'attributes.tier prefix gold'."
        )
    }

    public var description: String {
        op == .in || op == .prefix ? "\(field) \(op.rawValue) \(values.joined(separator: ","))" : "\(field)\(op.rawValue)\(values.joined())"
    }

    /// Whether a device meets the condition.
    public func matches(_ device: DeviceContext) -> Bool {
        guard let actual = value(of: device) else { return false }
        return meets(actual)
    }

    /// Whether every device that meets `other` meets this condition too. Sure answers only: `true`
    /// for the same condition, values `other` allows that all meet this one (`=`, `in`), a
    /// narrower prefix, a `!=` of the same value, or a tighter bound on the same side; `false`
    /// when in doubt.
    public func follows(from other: RolloutCondition) -> Bool {
        guard field == other.field else { return false }
        if self == other { return true }
        switch (other.op, op) {
        case (.equals, _), (.in, _):
            return other.values.allSatisfy(meets)
        case (.prefix, .prefix):
            return other.values[0].hasPrefix(values[0])
        case (.greaterThan, .greaterThan), (.greaterThan, .greaterThanOrEqual),
            (.greaterThanOrEqual, .greaterThanOrEqual), (.greaterThanOrEqual, .greaterThan):
            return bound(other, atLeast: true, strictly: op == .greaterThan && other.op == .greaterThanOrEqual)
        case (.lessThan, .lessThan), (.lessThan, .lessThanOrEqual), (.lessThanOrEqual, .lessThanOrEqual), (.lessThanOrEqual, .lessThan):
            return bound(other, atLeast: false, strictly: op == .lessThan && other.op == .lessThanOrEqual)
        default:
            return false
        }
    }

    /// Whether a device sending `value` for the field meets the condition.
    private func meets(_ value: String) -> Bool {
        switch op {
        case .equals: value == values[0]
        case .notEquals: value != values[0]
        case .in: values.contains(value)
        case .prefix: value.hasPrefix(values[0])
        default: ordered(value)
        }
    }

    /// Whether `other`'s bound is at or beyond this one's (beyond it, when `strictly`), on the
    /// upper side when `atLeast`.
    private func bound(_ other: RolloutCondition, atLeast: Bool, strictly: Bool) -> Bool {
        switch (other.threshold, threshold) {
        case (.version(let theirs)?, .version(let mine)?):
            return atLeast ? (strictly ? theirs > mine : theirs >= mine) : (strictly ? theirs < mine : theirs <= mine)
        case (.number(let theirs)?, .number(let mine)?):
            return atLeast ? (strictly ? theirs > mine : theirs >= mine) : (strictly ? theirs < mine : theirs <= mine)
        default:
            return false
        }
    }

    private func value(of device: DeviceContext) -> String? {
        switch source {
        case .platform: device.platform
        case .appVersion: device.appVersion
        case .osVersion: device.osVersion
        case .sdkVersion: device.sdkVersion
        case .country: device.country
        case .attribute(let key): device.attributes[key]
        }
    }

    private func ordered(_ actual: String) -> Bool {
        switch threshold {
        case .version(let right):
            guard let left = try? SemanticVersion(actual) else { return false }
            return compare(left, right)
        case .number(let right):
            guard let left = Double(actual) else { return false }
            return compare(left, right)
        case nil:
            return false
        }
    }

    private func compare<T: Comparable>(_ left: T, _ right: T) -> Bool {
        switch op {
        case .greaterThan: left > right
        case .greaterThanOrEqual: left >= right
        case .lessThan: left < right
        default: left <= right
        }
    }

    /// Checks a condition; returns the parsed value of an ordering comparison.
    private static func validate(field: String, op: Operator, values: [String]) throws(DepotError) -> Threshold? {
        let isAttribute = field.hasPrefix("attributes.") && field.count > "attributes.".count
        guard Self.versionFields.contains(field) || Self.textFields.contains(field) || isAttribute else {
            throw DepotError(
                .badRequest,
                "Condition field '\(field)' is unknown; use platform, appVersion, osVersion, sdkVersion, country or attributes.<key>.")
        }
        guard !values.isEmpty, values.allSatisfy({ !$0.isEmpty }), op == .in || values.count == 1 else {
            throw DepotError(
                .badRequest, "Condition on '\(field)' needs \(op == .in ? "one or more values" : "exactly one value") for '\(op.rawValue)'."
            )
        }
        guard op.isOrdering else { return nil }
        if Self.textFields.contains(field) {
            throw DepotError(.badRequest, "'\(field)' cannot be compared with '\(op.rawValue)'; use =, !=, in or prefix.")
        }
        if Self.versionFields.contains(field) { return .version(try SemanticVersion(values[0])) }
        guard let number = Double(values[0]) else {
            throw DepotError(
                .badRequest,
                "'\(values[0])' is not a number, so '\(field)' cannot be compared with '\(op.rawValue)'; use a number or =, !=, in, prefix."
            )
        }
        return .number(number)
    }
}

extension Substring {
    func trimmingCharacters(in set: Character) -> String {
        String(drop { $0 == set }.reversed().drop { $0 == set }.reversed())
    }
}
