import ModelDepotLiteRT

/// Camera frames of coloured blocks on a grey gradient, as the detector fixture
/// (`metadata/object_detector`: a 4×4 grid of anchors scoring each cell's colour) sees them: a
/// block fills one grid cell. Made as NV12 (BT.601, full range, 2×2 chroma averaged), as a
/// camera delivers them.
struct BlockScene {
    /// A block: its grid cell (column, row, 0-3) and its colour.
    struct Block {
        var column: Int
        var row: Int
        var rgb: (UInt8, UInt8, UInt8)
    }

    static let red: (UInt8, UInt8, UInt8) = (230, 20, 30)
    static let green: (UInt8, UInt8, UInt8) = (20, 220, 40)
    static let blue: (UInt8, UInt8, UInt8) = (25, 35, 235)

    var width = 320
    var height = 240

    /// The RGB pixels, rows top to bottom.
    func rgb(_ blocks: [Block]) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let level = UInt8(90 + (x + y) * 40 / (width + height))
                let block = blocks.first { x * 4 / width == $0.column && y * 4 / height == $0.row }
                let (r, g, b) = block?.rgb ?? (level, level, level)
                pixels[(y * width + x) * 3] = r
                pixels[(y * width + x) * 3 + 1] = g
                pixels[(y * width + x) * 3 + 2] = b
            }
        }
        return pixels
    }

    /// The scene as an upright camera frame.
    func frame(_ blocks: [Block]) throws -> CameraFrame {
        try Self.nv12(rgb(blocks), width: width, height: height, orientation: .up)
    }

    /// The scene as a camera held on its side delivers it: the sensor's frame is the scene turned
    /// 90° counter-clockwise (`height` wide, `width` high), tagged `.right` to stand it upright.
    func turnedFrame(_ blocks: [Block]) throws -> CameraFrame {
        let upright = rgb(blocks)
        let (sensorWidth, sensorHeight) = (height, width)
        var sensor = [UInt8](repeating: 0, count: upright.count)
        for y in 0..<sensorHeight {
            for x in 0..<sensorWidth {
                // `.right` puts the sensor's pixel (x, y) at the upright (sensorHeight - 1 - y, x).
                let source = (x * width + (sensorHeight - 1 - y)) * 3
                sensor[(y * sensorWidth + x) * 3..<(y * sensorWidth + x) * 3 + 3] = upright[source..<source + 3]
            }
        }
        return try Self.nv12(sensor, width: sensorWidth, height: sensorHeight, orientation: .right)
    }

    /// RGB pixels as an NV12 frame (BT.601 full range, 2x2 chroma averaged); even sizes.
    static func nv12(_ pixels: [UInt8], width: Int, height: Int, orientation: FrameOrientation) throws -> CameraFrame {
        var luma = [UInt8](repeating: 0, count: width * height)
        var chroma = [UInt8](repeating: 0, count: width * height / 2)
        func component(_ x: Int, _ y: Int, _ channel: Int) -> Double { Double(pixels[(y * width + x) * 3 + channel]) }
        for y in 0..<height {
            for x in 0..<width {
                luma[y * width + x] = byte(0.299 * component(x, y, 0) + 0.587 * component(x, y, 1) + 0.114 * component(x, y, 2))
            }
        }
        for y in stride(from: 0, to: height, by: 2) {
            for x in stride(from: 0, to: width, by: 2) {
                var (u, v) = (0.0, 0.0)
                for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    let (r, g, b) = (component(x + dx, y + dy, 0), component(x + dx, y + dy, 1), component(x + dx, y + dy, 2))
                    u += (-0.168736 * r - 0.331264 * g + 0.5 * b + 128) / 4
                    v += (0.5 * r - 0.418688 * g - 0.081312 * b + 128) / 4
                }
                chroma[(y / 2) * width + x] = byte(u)
                chroma[(y / 2) * width + x + 1] = byte(v)
            }
        }
        return try CameraFrame(
            width: width, height: height, format: .nv12,
            planes: [.init(bytes: luma, rowStride: width), .init(bytes: chroma, rowStride: width)],
            colorSpace: .bt601, colorRange: .full, orientation: orientation)
    }

    private static func byte(_ value: Double) -> UInt8 { UInt8(max(0, min(255, value.rounded()))) }
}
