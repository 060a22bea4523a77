import ModelDepotShared

/// The arm a manifest or download is counted under: one of a rollout's arms (``Rollout/Arm``), or
/// one that counting needs beyond them.
///
/// It is stored, signed into download URLs and sent in stats as its text (``stored``): `pin`,
/// `default`, `rule:<id>`, `latest` or `unknown`. Any other text (a row an older server wrote)
/// is kept as it is, so reading and writing it again changes no byte.
///
/// Two arms are equal, hash and sort as their texts do, whichever case holds them:
/// `.unrecognized("pin") == .pin`.
///
/// ```swift
/// let arm = CountedArm(rollout.assignment(for: device)?.arm)   // .latest without an assignment
/// CountedArm(stored: "rule:r-1a2b3c4d") == .rule(id: "r-1a2b3c4d")   // true
/// ```
public enum CountedArm: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// A pin (a tester's device held on one version).
    case pin
    /// The rollout's default version.
    case `default`
    /// The rule with this id.
    case rule(id: String)
    /// The newest published version, chosen without a rollout arm (the rollout has no default).
    case latest
    /// A download whose URL carried no valid arm token.
    case unknown
    /// Any other text, kept as it is. ``init(stored:)`` never makes one holding the text of
    /// another case.
    case unrecognized(String)

    /// The text before a rule's id.
    private static let rulePrefix = "rule:"

    /// The arm that counts a rollout's choice: `nil` (no arm applied) is ``latest``.
    public init(_ arm: Rollout.Arm?) {
        switch arm {
        case nil: self = .latest
        case .pin?: self = .pin
        case .default?: self = .default
        case .rule(let id)?: self = .rule(id: id)
        }
    }

    /// The arm stored as `text`: `pin`, `default`, `latest`, `unknown`, `rule:<id>` (any id,
    /// also an empty one), else ``unrecognized(_:)`` holding `text`. Its ``stored`` is `text`.
    public init(stored text: String) {
        // The texts come from `stored`, the one place they are written.
        switch text {
        case CountedArm.pin.stored: self = .pin
        case CountedArm.default.stored: self = .default
        case CountedArm.latest.stored: self = .latest
        case CountedArm.unknown.stored: self = .unknown
        default:
            // By scalars, not characters: a combining mark after the colon stays in the id.
            if text.unicodeScalars.starts(with: Self.rulePrefix.unicodeScalars) {
                self = .rule(id: String(text.unicodeScalars.dropFirst(Self.rulePrefix.unicodeScalars.count)))
            } else {
                self = .unrecognized(text)
            }
        }
    }

    /// The text the arm is stored, signed and sent as.
    public var stored: String {
        switch self {
        case .pin: "pin"
        case .default: "default"
        case .rule(let id): Self.rulePrefix + id
        case .latest: "latest"
        case .unknown: "unknown"
        case .unrecognized(let text): text
        }
    }

    /// The text the arm is stored as (``stored``).
    public var description: String { stored }

    /// Whether two arms have the same text (two arms of one case compare without making it).
    public static func == (lhs: CountedArm, rhs: CountedArm) -> Bool {
        switch (lhs, rhs) {
        case (.pin, .pin), (.default, .default), (.latest, .latest), (.unknown, .unknown): true
        case (.rule(let left), .rule(let right)): left == right
        case (.unrecognized(let left), .unrecognized(let right)): left == right
        default: lhs.stored == rhs.stored
        }
    }

    /// Hashes the arm's text.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(stored)
    }

    /// Whether `lhs`'s text sorts before `rhs`'s.
    public static func < (lhs: CountedArm, rhs: CountedArm) -> Bool {
        lhs.stored < rhs.stored
    }

    /// Decodes an arm from its text.
    public init(from decoder: any Decoder) throws {
        self.init(stored: try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the arm as its text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(stored)
    }
}
