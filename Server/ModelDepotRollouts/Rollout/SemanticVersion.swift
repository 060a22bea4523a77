import ModelDepotShared

/// A semantic version (`3.2.0`, `4.0.0-beta.2`) ordered as semver.org 2.0 orders them:
/// numbers numerically, and a pre-release below its release (`4.0.0-beta < 4.0.0`).
///
/// App and OS versions often have fewer parts (`17`, `3.2`): missing ones count as 0.
///
/// ```swift
/// try SemanticVersion("3.10.0") > SemanticVersion("3.9.1")   // true
/// ```
public struct SemanticVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Major, minor and patch.
    public let numbers: [Int]
    /// The dot-separated pre-release identifiers (`beta`, `2`); empty for a release.
    public let prerelease: [String]
    /// The text it was parsed from.
    public let description: String

    /// Parses `MAJOR[.MINOR[.PATCH]][-PRERELEASE][+BUILD]`; build metadata is ignored.
    /// - Throws: ``DepotError`` (`bad_request`) naming the text and the expected form.
    public init(_ text: String) throws(DepotError) {
        description = text
        let withoutBuild = text.split(separator: "+", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let parts = withoutBuild.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        let numbers = parts[0].split(separator: ".", omittingEmptySubsequences: false)
        // On the bytes: `("0"..."9").contains` takes a digit with a combining mark (`1\u{301}`) too.
        let parsed = numbers.compactMap { $0.utf8.count <= 9 && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } ? Int($0) : nil }
        guard (1...3).contains(numbers.count), parsed.count == numbers.count else {
            throw DepotError(
                .badRequest, "'\(text)' is not a version: use MAJOR.MINOR.PATCH with an optional -prerelease, e.g. 3.2.0 or 4.0.0-beta.1.")
        }
        self.numbers = parsed + Array(repeating: 0, count: 3 - numbers.count)
        prerelease = parts.count == 2 ? parts[1].split(separator: ".", omittingEmptySubsequences: false).map(String.init) : []
        guard parts.count == 1 || prerelease.allSatisfy({ !$0.isEmpty }) else {
            throw DepotError(.badRequest, "'\(text)' has an empty pre-release identifier; write e.g. 4.0.0-beta.1.")
        }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.numbers == rhs.numbers && lhs.prerelease == rhs.prerelease
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(numbers)
        hasher.combine(prerelease)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        if lhs.numbers != rhs.numbers { return lhs.numbers.lexicographicallyPrecedes(rhs.numbers) }
        switch (lhs.prerelease.isEmpty, rhs.prerelease.isEmpty) {
        case (true, _): return false
        case (false, true): return true
        default: break
        }
        for (left, right) in zip(lhs.prerelease, rhs.prerelease) where left != right {
            switch (Int(left), Int(right)) {
            // `01` and `1` are one number but two identifiers: ordered as text, so that one of
            // them is first.
            case let (l?, r?) where l != r: return l < r
            case (.some, nil): return true
            case (nil, .some): return false
            default: return left < right
            }
        }
        return lhs.prerelease.count < rhs.prerelease.count
    }
}
