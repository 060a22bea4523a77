/// A box moving at a constant velocity, as SORT and ByteTrack model it: the state is the
/// centre, the aspect ratio (width / height) and the height, and their velocities per frame;
/// noise scales with the box's height (1/20 of it for positions, 1/160 for velocities), so a
/// large, near object may move more pixels between frames than a small, far one.
struct BoxKalmanFilter: Sendable {
    /// centre x, centre y, aspect, height, then their velocities.
    private(set) var state: [Double]
    /// 8 x 8, row by row.
    private var covariance: [Double]

    private static let positionWeight = 1.0 / 20
    private static let velocityWeight = 1.0 / 160

    init(_ box: TrackerBox) {
        let measured = Self.measurement(box)
        state = measured + [0, 0, 0, 0]
        let h = measured[3]
        let deviations = [
            2 * Self.positionWeight * h, 2 * Self.positionWeight * h, 1e-2, 2 * Self.positionWeight * h,
            10 * Self.velocityWeight * h, 10 * Self.velocityWeight * h, 1e-5, 10 * Self.velocityWeight * h,
        ]
        covariance = Self.diagonal(deviations.map { $0 * $0 })
    }

    /// The box the state describes.
    var box: TrackerBox {
        let (height, width) = (state[3], state[2] * state[3])
        return TrackerBox(x: state[0] - width / 2, y: state[1] - height / 2, width: width, height: height)
    }

    /// Moves the state one frame ahead.
    mutating func predict() {
        let h = state[3]
        for index in 0..<4 { state[index] += state[index + 4] }
        // P = F P Fᵀ + Q, with F the identity plus the velocities added to the positions.
        var moved = covariance
        for row in 0..<8 {
            for column in 0..<8 {
                var value = covariance[row * 8 + column]
                if row < 4 { value += covariance[(row + 4) * 8 + column] }
                if column < 4 { value += covariance[row * 8 + column + 4] }
                if row < 4 && column < 4 { value += covariance[(row + 4) * 8 + column + 4] }
                moved[row * 8 + column] = value
            }
        }
        let noise = [
            Self.positionWeight * h, Self.positionWeight * h, 1e-2, Self.positionWeight * h,
            Self.velocityWeight * h, Self.velocityWeight * h, 1e-5, Self.velocityWeight * h,
        ]
        for index in 0..<8 { moved[index * 9] += noise[index] * noise[index] }
        covariance = moved
    }

    /// Corrects the state with a measured box.
    mutating func update(_ box: TrackerBox) {
        let measured = Self.measurement(box)
        let h = state[3]
        let noise = [Self.positionWeight * h, Self.positionWeight * h, 1e-1, Self.positionWeight * h]
        // S = H P Hᵀ + R: the top-left 4 x 4 of P.
        var innovation = [Double](repeating: 0, count: 16)
        for row in 0..<4 {
            for column in 0..<4 { innovation[row * 4 + column] = covariance[row * 8 + column] }
            innovation[row * 5] += noise[row] * noise[row]
        }
        guard let inverse = Self.inverse4(innovation) else { return }
        // K = P Hᵀ S⁻¹ (8 x 4).
        var gain = [Double](repeating: 0, count: 32)
        for row in 0..<8 {
            for column in 0..<4 {
                var value = 0.0
                for k in 0..<4 { value += covariance[row * 8 + k] * inverse[k * 4 + column] }
                gain[row * 4 + column] = value
            }
        }
        let residual = (0..<4).map { measured[$0] - state[$0] }
        for row in 0..<8 {
            for k in 0..<4 { state[row] += gain[row * 4 + k] * residual[k] }
        }
        // P = P − K H P: H P is P's first four rows.
        var corrected = covariance
        for row in 0..<8 {
            for column in 0..<8 {
                var value = 0.0
                for k in 0..<4 { value += gain[row * 4 + k] * covariance[k * 8 + column] }
                corrected[row * 8 + column] -= value
            }
        }
        covariance = corrected
    }

    private static func measurement(_ box: TrackerBox) -> [Double] {
        let height = max(box.height, 1e-6)
        return [box.x + box.width / 2, box.y + box.height / 2, box.width / height, height]
    }

    private static func diagonal(_ values: [Double]) -> [Double] {
        var matrix = [Double](repeating: 0, count: values.count * values.count)
        for (index, value) in values.enumerated() { matrix[index * (values.count + 1)] = value }
        return matrix
    }

    /// The inverse of a 4 x 4 matrix by Gauss-Jordan elimination with partial pivoting; `nil`
    /// when it is singular.
    private static func inverse4(_ matrix: [Double]) -> [Double]? {
        var a = matrix
        var inverse = diagonal([1, 1, 1, 1])
        for column in 0..<4 {
            guard let pivot = (column..<4).max(by: { abs(a[$0 * 4 + column]) < abs(a[$1 * 4 + column]) }),
                abs(a[pivot * 4 + column]) > 1e-12
            else { return nil }
            if pivot != column {
                for k in 0..<4 {
                    a.swapAt(pivot * 4 + k, column * 4 + k)
                    inverse.swapAt(pivot * 4 + k, column * 4 + k)
                }
            }
            let scale = a[column * 4 + column]
            for k in 0..<4 {
                a[column * 4 + k] /= scale
                inverse[column * 4 + k] /= scale
            }
            for row in 0..<4 where row != column {
                let factor = a[row * 4 + column]
                guard factor != 0 else { continue }
                for k in 0..<4 {
                    a[row * 4 + k] -= factor * a[column * 4 + k]
                    inverse[row * 4 + k] -= factor * inverse[column * 4 + k]
                }
            }
        }
        return inverse
    }
}
