"""Bit-exact pure-Python (numpy) reimplementation of libyuv's
ARGBScale(..., kFilterBilinear)   (src/dst tightly packed, positive sizes): the reference the
Swift resize (Client/ModelDepotLiteRT/Image/BilinearScaler.swift) is tested against, for every
path libyuv takes (the TFLite Task Library resizes images with it).

    libyuv_argb_scale.py SRC_W SRC_H DST_W DST_H CHANNELS < pixels > scaled   (variant "c")

Follows libyuv source/scale_argb.cc (ScaleARGB and the helpers it dispatches
to), source/scale_common.cc (ScaleFilterReduce, ScaleSlope,
ScalePlaneVertical, ScaleARGB*_C row functions) and source/row_common.cc
(InterpolateRow_C).  Validated byte-for-byte against Debian libyuv 0.0~git
20230123.b2528b0 (LIBYUV_VERSION 1857), both its SIMD (SSSE3/AVX2) paths and
its pure C paths.  The code of these functions is unchanged in libyuv 1914
(godot's copy) apart from new SIMD back ends.

All coordinates are 16.16 fixed point Python ints (exact, no overflow).
Pixels are processed as 4 independent byte channels, so channel order
(BGRA / RGBA / "RGB + 255") is irrelevant.

Public API:
    argb_scale_bilinear(src[h, w, 4] uint8, dst_w, dst_h) -> [dst_h, dst_w, 4]
    rgb_resize_tflite(src[h, w, 3] uint8, dst_w, dst_h)   -> [dst_h, dst_w, 3]
        (= TFLite Task Library ResizeRgb: RGB24ToARGB -> ARGBScale -> ARGBToRGB24)
"""
import numpy as np

kFilterNone, kFilterLinear, kFilterBilinear, kFilterBox = 0, 1, 2, 3


# ----------------------------------------------------------------------------
# scale_common.cc
# ----------------------------------------------------------------------------
def scale_filter_reduce(sw, sh, dw, dh, filtering):
    sw, sh = abs(sw), abs(sh)
    if filtering == kFilterBox:
        if dw * 2 >= sw or dh * 2 >= sh:
            filtering = kFilterBilinear
    if filtering == kFilterBilinear:
        if sh == 1:
            filtering = kFilterLinear
        if dh == sh or dh * 3 == sh:
            filtering = kFilterLinear
        if sw == 1:
            filtering = kFilterNone
    if filtering == kFilterLinear:
        if sw == 1:
            filtering = kFilterNone
        if dw == sw or dw * 3 == sw:
            filtering = kFilterNone
    return filtering


def _cdiv(a, b):
    """C integer division (truncate toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def fixed_div(num, div):          # FixedDiv_C / FixedDiv_X86
    return _cdiv(num << 16, div)


def fixed_div1(num, div):         # FixedDiv1_C / FixedDiv1_X86
    return _cdiv((num << 16) - 0x00010001, div - 1)


def _centerstart(dx, s):
    return -((-dx >> 1) + s) if dx < 0 else ((dx >> 1) + s)


def scale_slope(sw, sh, dw, dh, filtering):
    """Returns x, y, dx, dy (16.16).  sw, sh > 0 assumed (no mirroring)."""
    x = y = dx = dy = 0
    if dw == 1 and sw >= 32768:
        dw = sw
    if dh == 1 and sh >= 32768:
        dh = sh
    if filtering == kFilterBox:
        dx = fixed_div(abs(sw), dw)
        dy = fixed_div(sh, dh)
    elif filtering == kFilterBilinear:
        if dw <= abs(sw):
            dx = fixed_div(abs(sw), dw)
            x = _centerstart(dx, -32768)
        elif sw > 1 and dw > 1:
            dx = fixed_div1(abs(sw), dw)
            x = 0
        if dh <= sh:
            dy = fixed_div(sh, dh)
            y = _centerstart(dy, -32768)
        elif sh > 1 and dh > 1:
            dy = fixed_div1(sh, dh)
            y = 0
    elif filtering == kFilterLinear:
        if dw <= abs(sw):
            dx = fixed_div(abs(sw), dw)
            x = _centerstart(dx, -32768)
        elif sw > 1 and dw > 1:
            dx = fixed_div1(abs(sw), dw)
            x = 0
        dy = fixed_div(sh, dh)
        y = dy >> 1
    else:
        dx = fixed_div(abs(sw), dw)
        dy = fixed_div(sh, dh)
        x = _centerstart(dx, 0)
        y = _centerstart(dy, 0)
    return x, y, dx, dy


# ----------------------------------------------------------------------------
# Row functions (operate on flat uint8 byte rows; return new arrays)
# ----------------------------------------------------------------------------
def interpolate_row(r0, r1, f):
    """InterpolateRow_C: r0,r1 uint8 byte rows, f = source_y_fraction 0..255."""
    if f == 0:
        return r0.copy()
    a = r0.astype(np.int32)
    if f == 128:  # HalfRow_C
        return ((a + r1 + 1) >> 1).astype(np.uint8)
    return ((a * (256 - f) + r1.astype(np.int32) * f + 128) >> 8).astype(np.uint8)


def filter_cols(row, dst_width, x, dx):
    """ScaleARGBFilterCols_C / ScaleARGBFilterCols64_C (same math).
    row: [n, 4] uint8 source pixels (n may be a clipped width).
    Reads src[xi] and src[xi+1]; libyuv may read src[xi+1] one pixel past the
    (clipped) row only when xf == 0, where its weight is 0 -> we clamp."""
    xs = x + dx * np.arange(dst_width, dtype=np.int64)
    xi = xs >> 16
    xf = ((xs >> 9) & 0x7F).astype(np.int32)[:, None]
    n = row.shape[0]
    a = row[np.minimum(xi, n - 1)].astype(np.int32)
    b = row[np.minimum(xi + 1, n - 1)].astype(np.int32)
    # BLENDER1(a, b, f) = (a * (0x7f ^ f) + b * f) >> 7     (NOTE: 127 - f, not 128 - f)
    return ((a * (0x7F ^ xf) + b * xf) >> 7).astype(np.uint8)


def point_cols(row, dst_width, x, dx):
    """ScaleARGBCols_C / ScaleARGBCols64_C / ScaleARGBColsUp2_C."""
    xs = x + dx * np.arange(dst_width, dtype=np.int64)
    return row[xs >> 16]


# ----------------------------------------------------------------------------
# scale_argb.cc paths.  src: [sh, sw, 4] uint8.  Returns [dh, dw, 4] uint8.
# ----------------------------------------------------------------------------
def _box4(a, b, c, d, variant):
    """2x2 box of int32 arrays [n, 4]; a,b = top pair, c,d = bottom pair.
    C / NEON: (a + b + c + d + 2) >> 2.
    x86 SSE2 (ScaleARGBRowDown2Box_SSE2 / ScaleARGBRowDownEvenBox_SSE2):
        pavgb(pavgb(a, c), pavgb(b, d))  with pavgb(p, q) = (p + q + 1) >> 1,
    but only for the first (n & ~3) output pixels; the '_Any_' wrapper does
    the remaining n % 4 pixels with the C function."""
    out = (a + b + c + d + 2) >> 2
    if variant == "x86":
        m = a.shape[0] & ~3
        if m:
            v0 = (a[:m] + c[:m] + 1) >> 1
            v1 = (b[:m] + d[:m] + 1) >> 1
            out[:m] = (v0 + v1 + 1) >> 1
    return out


def _down2(src, dw, dh, x, dx, y, dy, filtering, variant="c"):
    assert dx == 0x20000 and (dy & 0x1FFFF) == 0
    rstep = dy >> 16
    y0 = y >> 16
    x0 = (x >> 16) if filtering == kFilterBilinear else (x >> 16) - 1
    out = np.empty((dh, dw, 4), np.uint8)
    for j in range(dh):
        r = y0 + j * rstep
        row = src[r, x0:x0 + 2 * dw].astype(np.int32)   # [2*dw, 4]
        p0, p1 = row[0::2], row[1::2]
        if filtering == kFilterNone:        # ScaleARGBRowDown2_C: take odd pixel
            out[j] = p1
        elif filtering == kFilterLinear:    # ScaleARGBRowDown2Linear_C
            out[j] = (p0 + p1 + 1) >> 1     # (SSE2 pavgb: identical)
        else:                               # ScaleARGBRowDown2Box_C
            row2 = src[r + 1, x0:x0 + 2 * dw].astype(np.int32)
            out[j] = _box4(p0, p1, row2[0::2], row2[1::2], variant)
    return out


def _down_even(src, dw, dh, x, dx, y, dy, filtering, variant="c"):
    col_step = dx >> 16
    rstep = dy >> 16
    y0, x0 = y >> 16, x >> 16
    cols = x0 + col_step * np.arange(dw)
    out = np.empty((dh, dw, 4), np.uint8)
    for j in range(dh):
        r = y0 + j * rstep
        if filtering:   # ScaleARGBRowDownEvenBox_C (src_stride = 0 for Linear)
            r2 = r if filtering == kFilterLinear else r + 1
            a = src[r, cols].astype(np.int32)
            b = src[r, cols + 1].astype(np.int32)
            c = src[r2, cols].astype(np.int32)
            d = src[r2, cols + 1].astype(np.int32)
            out[j] = _box4(a, b, c, d, variant)
        else:           # ScaleARGBRowDownEven_C
            out[j] = src[r, cols]
    return out


def _plane_vertical(src, dw, dh, x, y, dy, filtering):
    sh = src.shape[0]
    max_y = ((sh - 1) << 16) - 1 if sh > 1 else 0
    x0 = x >> 16
    out = np.empty((dh, dw, 4), np.uint8)
    for j in range(dh):
        if y > max_y:
            y = max_y
        yi = y >> 16
        yf = ((y >> 8) & 255) if filtering else 0
        r0 = src[yi, x0:x0 + dw].reshape(-1)
        r1 = src[yi + 1, x0:x0 + dw].reshape(-1) if yf else r0
        out[j] = interpolate_row(r0, r1, yf).reshape(dw, 4)
        y += dy
    return out


def _bilinear_up(src, dw, dh, x, dx, y, dy, filtering):
    sh, sw = src.shape[:2]
    cols = filter_cols if filtering else point_cols
    max_y = (sh - 1) << 16
    if y > max_y:
        y = max_y
    yi = y >> 16
    srow = yi                      # the 'src' row pointer, as a row index
    buf = [None, None]             # the two row buffers
    buf[0] = cols(src[srow], dw, x, dx)
    if sh > 1:
        srow += 1
    buf[1] = cols(src[srow], dw, x, dx)
    if sh > 2:
        srow += 1
    rp, rs = 0, 1                  # rowptr slot; rowstride as +1 / -1 slot
    lasty = yi
    out = np.empty((dh, dw, 4), np.uint8)
    for j in range(dh):
        yi = y >> 16
        if yi != lasty:
            if y > max_y:
                y = max_y
                yi = y >> 16
                srow = yi
            if yi != lasty:
                buf[rp] = cols(src[srow], dw, x, dx)
                rp += rs
                rs = -rs
                lasty = yi
                if (y + 65536) < max_y:
                    srow += 1
        top = buf[rp].reshape(-1)
        if filtering == kFilterLinear:
            out[j] = top.reshape(dw, 4)
        else:
            yf = (y >> 8) & 255
            bot = buf[rp + rs].reshape(-1)
            out[j] = interpolate_row(top, bot, yf).reshape(dw, 4)
        y += dy
    return out


def _bilinear_down(src, dw, dh, x, dx, y, dy, filtering):
    sh, sw = src.shape[:2]
    xlast = x + (dw - 1) * dx
    xl, xr = (x, xlast) if dx >= 0 else (xlast, x)
    xl = (xl >> 16) & ~3
    xr = (xr >> 16) + 1
    xr = (xr + 1 + 3) & ~3
    if xr > sw:
        xr = sw
    x -= xl << 16
    clip = src[:, xl:xr]           # clip_src_width = xr - xl pixels
    max_y = (sh - 1) << 16
    if y > max_y:
        y = max_y
    out = np.empty((dh, dw, 4), np.uint8)
    for j in range(dh):
        yi = y >> 16
        if filtering == kFilterLinear:
            out[j] = filter_cols(clip[yi], dw, x, dx)
        else:
            yf = (y >> 8) & 255
            r0 = clip[yi].reshape(-1)
            r1 = clip[yi + 1].reshape(-1) if yf else r0
            row = interpolate_row(r0, r1, yf).reshape(-1, 4)
            out[j] = filter_cols(row, dw, x, dx)
        y += dy
        if y > max_y:
            y = max_y
    return out


def _simple(src, dw, dh, x, dx, y, dy):
    out = np.empty((dh, dw, 4), np.uint8)
    for j in range(dh):
        out[j] = point_cols(src[y >> 16], dw, x, dx)
        y += dy
    return out


def describe_path(sw, sh, dw, dh, filtering=kFilterBilinear):
    """Returns (path_name, filtering, x, y, dx, dy) chosen by ScaleARGB."""
    filtering = scale_filter_reduce(sw, sh, dw, dh, filtering)
    x, y, dx, dy = scale_slope(sw, sh, dw, dh, filtering)
    if ((dx | dy) & 0xFFFF) == 0:
        if not dx or not dy:
            filtering = kFilterNone
        else:
            if not (dx & 0x10000) and not (dy & 0x10000):
                if dx == 0x20000 and dy == 0x20000:
                    return "Down2", filtering, x, y, dx, dy
                if dx == 0x40000 and dy == 0x40000 and filtering == kFilterBox:
                    return "Down4Box", filtering, x, y, dx, dy
                return "DownEven", filtering, x, y, dx, dy
            if (dx & 0x10000) and (dy & 0x10000):
                filtering = kFilterNone
                if dx == 0x10000 and dy == 0x10000:
                    return "Copy", filtering, x, y, dx, dy
    if dx == 0x10000 and (x & 0xFFFF) == 0:
        return "Vertical", filtering, x, y, dx, dy
    if filtering and dy < 65536:
        return "BilinearUp", filtering, x, y, dx, dy
    if filtering:
        return "BilinearDown", filtering, x, y, dx, dy
    return "Simple", filtering, x, y, dx, dy


def argb_scale(src, dst_w, dst_h, filtering=kFilterBilinear, variant="c"):
    """variant: "c"   -> libyuv C row functions (also what ARM NEON computes)
                "x86" -> libyuv on x86 with SSE2 (any x86-64): differs from C
                         only in the 2x2 box of the Down2 / DownEven paths."""
    src = np.ascontiguousarray(src, dtype=np.uint8)
    sh, sw = src.shape[:2]
    assert src.ndim == 3 and src.shape[2] == 4
    if sw == 0 or sh == 0 or sw > 32768 or sh > 32768 or dst_w <= 0 or dst_h <= 0:
        raise ValueError("ARGBScale would return -1 for these sizes")
    if filtering == kFilterBox:
        raise NotImplementedError("only kFilterNone/Linear/Bilinear reproduced")
    path, f, x, y, dx, dy = describe_path(sw, sh, dst_w, dst_h, filtering)
    if path == "Down2":
        return _down2(src, dst_w, dst_h, x, dx, y, dy, f, variant)
    if path == "DownEven":
        return _down_even(src, dst_w, dst_h, x, dx, y, dy, f, variant)
    if path == "Copy":
        return src[y >> 16:(y >> 16) + dst_h, x >> 16:(x >> 16) + dst_w].copy()
    if path == "Vertical":
        return _plane_vertical(src, dst_w, dst_h, x, y, dy, f)
    if path == "BilinearUp":
        return _bilinear_up(src, dst_w, dst_h, x, dx, y, dy, f)
    if path == "BilinearDown":
        return _bilinear_down(src, dst_w, dst_h, x, dx, y, dy, f)
    return _simple(src, dst_w, dst_h, x, dx, y, dy)


def argb_scale_bilinear(src, dst_w, dst_h, variant="c"):
    """libyuv::ARGBScale(src, w*4, w, h, dst, dst_w*4, dst_w, dst_h, kFilterBilinear)."""
    return argb_scale(src, dst_w, dst_h, kFilterBilinear, variant)


def rgb_resize_tflite(rgb, dst_w, dst_h, variant="c"):
    """TFLite Task Library LibyuvFrameBufferUtils ResizeRgb: RGB24ToARGB (adds a
    constant 255 4th byte, keeps byte order), ARGBScale bilinear, ARGBToRGB24
    (drops 4th byte).  Channels are independent, so == scaling the 3 channels."""
    h, w = rgb.shape[:2]
    argb = np.empty((h, w, 4), np.uint8)
    argb[..., :3] = rgb
    argb[..., 3] = 255
    return argb_scale_bilinear(argb, dst_w, dst_h, variant)[..., :3].copy()


if __name__ == "__main__":
    import sys
    sw, sh, dw, dh, channels = (int(a) for a in sys.argv[1:6])
    pixels = np.frombuffer(sys.stdin.buffer.read(), np.uint8).reshape(sh, sw, channels)
    argb = np.full((sh, sw, 4), 255, np.uint8)
    argb[..., :channels] = pixels
    sys.stdout.buffer.write(argb_scale_bilinear(argb, dw, dh, "c")[..., :channels].tobytes())
