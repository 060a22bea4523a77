/// A box in pixels, with fractions: what the tracker predicts and compares.
public struct TrackerBox: Sendable, Hashable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var description: String { "(\(x), \(y)) \(width)x\(height)" }

    /// Intersection over union: 0 for boxes apart (or without area), 1 for the same box.
    public func intersectionOverUnion(_ other: TrackerBox) -> Double {
        let overlapWidth = min(x + width, other.x + other.width) - max(x, other.x)
        let overlapHeight = min(y + height, other.y + other.height) - max(y, other.y)
        guard overlapWidth > 0, overlapHeight > 0 else { return 0 }
        let overlap = overlapWidth * overlapHeight
        let union = width * height + other.width * other.height - overlap
        return union > 0 ? overlap / union : 0
    }
}
