/// libyuv's `ARGBScale(..., kFilterBilinear)` with its portable C rounding, which the TFLite
/// Task Library (and so ML Kit) resizes images with: the same 16.16 fixed-point steps, the same
/// choice of path (copy, 2x and even box filters, point sampling, vertical-only, bilinear up and
/// down) and the same integer rounding, so a model gets the same pixels from both. Channels are
/// scaled independently. (libyuv's x86 SSE2 box filters round the 2x/4x/6x… downscales up to one
/// level differently; ARM and the C code do as this does.)
struct BilinearScaler {
    private enum Filter: Int { case none, linear, bilinear }

    let source: [UInt8]
    let width: Int
    let height: Int
    let channels: Int

    /// The scaled pixels, `width * height * channels` bytes.
    func scaled(width dw: Int, height dh: Int) -> [UInt8] {
        let (sw, sh) = (width, height)
        var filter = Self.reduce(sw, sh, dw, dh)
        var (x, y, dx, dy) = Self.slope(sw, sh, dw, dh, filter)
        if (dx | dy) & 0xFFFF == 0 {
            if dx == 0 || dy == 0 {
                filter = .none
            } else if dx & 0x10000 == 0, dy & 0x10000 == 0 {
                return dx == 0x20000 && dy == 0x20000 ? down2(dw, dh, x, y, dy, filter) : downEven(dw, dh, x, dx, y, dy, filter)
            } else if dx & 0x10000 != 0, dy & 0x10000 != 0 {
                filter = .none
                if dx == 0x10000, dy == 0x10000 { return simple(dw, dh, x, dx, y, dy) }
            }
        }
        if dx == 0x10000, x & 0xFFFF == 0 { return vertical(dw, dh, x, y, dy, filter) }
        if filter != .none, dy < 65536 { return bilinearUp(dw, dh, x, dx, &y, dy, filter) }
        if filter != .none { return bilinearDown(dw, dh, &x, dx, &y, dy, filter) }
        return simple(dw, dh, x, dx, y, dy)
    }

    // MARK: Choosing the path (scale_common.cc: ScaleFilterReduce, ScaleSlope)

    private static func reduce(_ sw: Int, _ sh: Int, _ dw: Int, _ dh: Int) -> Filter {
        var filter = Filter.bilinear
        if sh == 1 || dh == sh || dh * 3 == sh { filter = .linear }
        if sw == 1 { filter = .none }
        if filter == .linear, sw == 1 || dw == sw || dw * 3 == sw { filter = .none }
        return filter
    }

    private static func divide(_ numerator: Int, _ divisor: Int) -> Int { (numerator << 16) / divisor }
    private static func divide1(_ numerator: Int, _ divisor: Int) -> Int { ((numerator << 16) - 0x10001) / (divisor - 1) }

    private static func slope(_ sw: Int, _ sh: Int, _ dw: Int, _ dh: Int, _ filter: Filter) -> (x: Int, y: Int, dx: Int, dy: Int) {
        let dw = dw == 1 && sw >= 32768 ? sw : dw
        let dh = dh == 1 && sh >= 32768 ? sh : dh
        var (x, y, dx, dy) = (0, 0, 0, 0)
        switch filter {
        case .bilinear, .linear:
            if dw <= sw {
                dx = divide(sw, dw)
                x = (dx >> 1) - 32768
            } else if sw > 1, dw > 1 {
                dx = divide1(sw, dw)
            }
            if filter == .linear {
                dy = divide(sh, dh)
                y = dy >> 1
            } else if dh <= sh {
                dy = divide(sh, dh)
                y = (dy >> 1) - 32768
            } else if sh > 1, dh > 1 {
                dy = divide1(sh, dh)
            }
        case .none:
            dx = divide(sw, dw)
            dy = divide(sh, dh)
            x = dx >> 1
            y = dy >> 1
        }
        return (x, y, dx, dy)
    }

    // MARK: Rows (row_common.cc, scale_common.cc)

    private func row(_ index: Int) -> ArraySlice<UInt8> {
        source[(index * width * channels)..<((index + 1) * width * channels)]
    }

    /// InterpolateRow_C: `(a * (256 - f) + b * f + 128) >> 8`, a plain average at 128.
    private func interpolate(_ top: ArraySlice<UInt8>, _ bottom: ArraySlice<UInt8>, _ fraction: Int) -> [UInt8] {
        if fraction == 0 { return Array(top) }
        return zip(top, bottom).map { a, b in
            fraction == 128 ? UInt8((Int(a) + Int(b) + 1) >> 1) : UInt8((Int(a) * (256 - fraction) + Int(b) * fraction + 128) >> 8)
        }
    }

    /// ScaleARGBFilterCols_C: `(a * (127 ^ f) + b * f) >> 7` with a 7-bit fraction.
    private func filterColumns(_ row: ArraySlice<UInt8>, count: Int, x: Int, dx: Int) -> [UInt8] {
        let pixels = row.count / channels
        let start = row.startIndex
        var out = [UInt8](repeating: 0, count: count * channels)
        for index in 0..<count {
            let position = x + index * dx
            let left = min(position >> 16, pixels - 1), right = min((position >> 16) + 1, pixels - 1)
            let fraction = (position >> 9) & 0x7F
            for channel in 0..<channels {
                let a = Int(row[start + left * channels + channel]), b = Int(row[start + right * channels + channel])
                out[index * channels + channel] = UInt8((a * (0x7F ^ fraction) + b * fraction) >> 7)
            }
        }
        return out
    }

    private func pointColumns(_ row: ArraySlice<UInt8>, count: Int, x: Int, dx: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count * channels)
        for index in 0..<count {
            let pixel = row.startIndex + ((x + index * dx) >> 16) * channels
            out += row[pixel..<(pixel + channels)]
        }
        return out
    }

    // MARK: Paths (scale_argb.cc)

    private func box(_ a: Int, _ b: Int, _ c: Int, _ d: Int) -> UInt8 { UInt8((a + b + c + d + 2) >> 2) }

    private func down2(_ dw: Int, _ dh: Int, _ x: Int, _ y: Int, _ dy: Int, _ filter: Filter) -> [UInt8] {
        let firstColumn = filter == .bilinear ? x >> 16 : (x >> 16) - 1
        var out: [UInt8] = []
        out.reserveCapacity(dw * dh * channels)
        for j in 0..<dh {
            let r = (y >> 16) + j * (dy >> 16)
            let top = row(r), bottom = filter == .bilinear ? row(r + 1) : top
            for i in 0..<dw {
                let p0 = top.startIndex + (firstColumn + 2 * i) * channels, q0 = bottom.startIndex + (firstColumn + 2 * i) * channels
                for c in 0..<channels {
                    let a = Int(top[p0 + c]), b = Int(top[p0 + channels + c])
                    switch filter {
                    case .none: out.append(UInt8(b))
                    case .linear: out.append(UInt8((a + b + 1) >> 1))
                    case .bilinear: out.append(box(a, b, Int(bottom[q0 + c]), Int(bottom[q0 + channels + c])))
                    }
                }
            }
        }
        return out
    }

    private func downEven(_ dw: Int, _ dh: Int, _ x: Int, _ dx: Int, _ y: Int, _ dy: Int, _ filter: Filter) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(dw * dh * channels)
        for j in 0..<dh {
            let r = (y >> 16) + j * (dy >> 16)
            let top = row(r), bottom = filter == .bilinear ? row(r + 1) : top
            for i in 0..<dw {
                let p = top.startIndex + ((x >> 16) + i * (dx >> 16)) * channels,
                    q = bottom.startIndex + ((x >> 16) + i * (dx >> 16)) * channels
                for c in 0..<channels {
                    out.append(
                        filter == .none
                            ? top[p + c]
                            : box(Int(top[p + c]), Int(top[p + channels + c]), Int(bottom[q + c]), Int(bottom[q + channels + c])))
                }
            }
        }
        return out
    }

    private func vertical(_ dw: Int, _ dh: Int, _ x: Int, _ y: Int, _ dy: Int, _ filter: Filter) -> [UInt8] {
        let maximum = height > 1 ? ((height - 1) << 16) - 1 : 0
        var y = y
        var out: [UInt8] = []
        out.reserveCapacity(dw * dh * channels)
        let first = (x >> 16) * channels
        for _ in 0..<dh {
            y = min(y, maximum)
            let fraction = filter == .none ? 0 : (y >> 8) & 255
            let top = row(y >> 16), cut = top.startIndex + first
            let upper = top[cut..<(cut + dw * channels)]
            if fraction == 0 {
                out += upper
            } else {
                let bottom = row((y >> 16) + 1), lower = bottom[(bottom.startIndex + first)..<(bottom.startIndex + first + dw * channels)]
                out += interpolate(upper, lower, fraction)
            }
            y += dy
        }
        return out
    }

    private func bilinearUp(_ dw: Int, _ dh: Int, _ x: Int, _ dx: Int, _ y: inout Int, _ dy: Int, _ filter: Filter) -> [UInt8] {
        let columns = { (index: Int) in
            filter == .none ? pointColumns(row(index), count: dw, x: x, dx: dx) : filterColumns(row(index), count: dw, x: x, dx: dx)
        }
        let maximum = (height - 1) << 16
        y = min(y, maximum)
        var yi = y >> 16
        var sourceRow = yi
        var buffers = [columns(sourceRow), []]
        if height > 1 { sourceRow += 1 }
        buffers[1] = columns(sourceRow)
        if height > 2 { sourceRow += 1 }
        var current = 0, stride = 1
        var last = yi
        var out: [UInt8] = []
        out.reserveCapacity(dw * dh * channels)
        for _ in 0..<dh {
            yi = y >> 16
            if yi != last {
                if y > maximum {
                    y = maximum
                    yi = y >> 16
                    sourceRow = yi
                }
                if yi != last {
                    buffers[current] = columns(sourceRow)
                    current += stride
                    stride = -stride
                    last = yi
                    if y + 65536 < maximum { sourceRow += 1 }
                }
            }
            if filter == .linear {
                out += buffers[current]
            } else {
                out += interpolate(buffers[current][...], buffers[current + stride][...], (y >> 8) & 255)
            }
            y += dy
        }
        return out
    }

    private func bilinearDown(_ dw: Int, _ dh: Int, _ x: inout Int, _ dx: Int, _ y: inout Int, _ dy: Int, _ filter: Filter) -> [UInt8] {
        let last = x + (dw - 1) * dx
        let left = (min(x, last) >> 16) & ~3
        let right = min(width, ((max(x, last) >> 16) + 1 + 1 + 3) & ~3)
        x -= left << 16
        let maximum = (height - 1) << 16
        y = min(y, maximum)
        var out: [UInt8] = []
        out.reserveCapacity(dw * dh * channels)
        let clip = { (index: Int) -> ArraySlice<UInt8> in
            let full = row(index)
            return full[(full.startIndex + left * channels)..<(full.startIndex + right * channels)]
        }
        for _ in 0..<dh {
            let yi = y >> 16
            if filter == .linear {
                out += filterColumns(clip(yi), count: dw, x: x, dx: dx)
            } else {
                let fraction = (y >> 8) & 255
                let mixed = fraction == 0 ? Array(clip(yi)) : interpolate(clip(yi), clip(yi + 1), fraction)
                out += filterColumns(mixed[...], count: dw, x: x, dx: dx)
            }
            y = min(y + dy, maximum)
        }
        return out
    }

    private func simple(_ dw: Int, _ dh: Int, _ x: Int, _ dx: Int, _ y: Int, _ dy: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(dw * dh * channels)
        var y = y
        for _ in 0..<dh {
            out += pointColumns(row(y >> 16), count: dw, x: x, dx: dx)
            y += dy
        }
        return out
    }
}
