import ModelDepotShared

/// How a camera frame must be turned to stand upright, as ML Kit's `VisionImage.orientation`
/// (a `UIImage.Orientation`) and `InputImage`'s `rotationDegrees` say it: first mirrored left to
/// right when `mirrored` (a front camera), then rotated `rotation` degrees clockwise.
public struct FrameOrientation: Sendable, Hashable {
    /// Degrees clockwise: 0, 90, 180 or 270.
    public let rotation: Int
    public let mirrored: Bool

    /// - Throws: `DepotError` (`invalid_image`) for a rotation other than 0, 90, 180 or 270.
    public init(rotation: Int, mirrored: Bool = false) throws(DepotError) {
        guard [0, 90, 180, 270].contains(rotation) else {
            throw DepotError(
                .invalidImage, "A frame's rotation of \(rotation) degrees is not one a camera gives: use 0, 90, 180 or 270 (clockwise).")
        }
        self.rotation = rotation
        self.mirrored = mirrored
    }

    private init(_ rotation: Int, _ mirrored: Bool) {
        self.rotation = rotation
        self.mirrored = mirrored
    }

    /// `UIImage.Orientation.up`: the frame is upright (Android: `rotationDegrees` 0).
    public static let up = FrameOrientation(0, false)
    /// `.right`: rotate 90° clockwise (the back camera of a phone held upright; Android: 90).
    public static let right = FrameOrientation(90, false)
    /// `.down`: rotate 180°.
    public static let down = FrameOrientation(180, false)
    /// `.left`: rotate 270° clockwise.
    public static let left = FrameOrientation(270, false)
    /// `.upMirrored`: mirror left to right.
    public static let upMirrored = FrameOrientation(0, true)
    /// `.rightMirrored`: mirror, then rotate 90° clockwise.
    public static let rightMirrored = FrameOrientation(90, true)
    /// `.downMirrored`: mirror, then rotate 180° (a flip top to bottom).
    public static let downMirrored = FrameOrientation(180, true)
    /// `.leftMirrored`: mirror, then rotate 270° clockwise (the front camera of a phone held upright).
    public static let leftMirrored = FrameOrientation(270, true)

    /// The upright image's size for a frame of `width` by `height`.
    func uprightSize(width: Int, height: Int) -> (width: Int, height: Int) {
        rotation == 90 || rotation == 270 ? (height, width) : (width, height)
    }

    /// Where the frame's pixel (`x`, `y`) lands in the upright image, for a frame of `width` by `height`.
    func destination(ofX x: Int, y: Int, width: Int, height: Int) -> (x: Int, y: Int) {
        let mirroredX = mirrored ? width - 1 - x : x
        return switch rotation {
        case 90: (height - 1 - y, mirroredX)
        case 180: (width - 1 - mirroredX, height - 1 - y)
        case 270: (y, width - 1 - mirroredX)
        default: (mirroredX, y)
        }
    }
}
