"""libyuv's own conversion of camera frames, the reference CameraFrame
(Client/ModelDepotLiteRT/Image/CameraFrame.swift) is tested against: Debian's libyuv0 (the
library the TFLite Task Library converts frames with) through ctypes.

    libyuv_frame_reference.py DIR

DIR/request.json: {"width", "height", "format": "nv12"|"nv21"|"i420", "colorSpace": "bt601"|"bt709",
"range": "video"|"full", "rotation": 0|90|180|270, "mirrored": bool, "strides": [per plane],
"source": "rgba" (DIR/source.rgba, width*height*4 bytes, made into the frame by libyuv's
ARGBToI420, then laid out as the format asks) or "random" (DIR/plane<i>.bin as they are)}.
Writes DIR/plane<i>.bin (for "rgba") and DIR/libyuv.rgb: the frame converted by libyuv
(NV12ToARGBMatrix, NV21ToARGBMatrix or I420ToARGBMatrix with kYuv{I601,JPEG,H709,F709}Constants),
then mirrored (ARGBMirror) and rotated clockwise (ARGBRotate), as RGB bytes.
"""
import ctypes
import json
import os
import sys

lib = ctypes.CDLL("libyuv.so.0")
directory = sys.argv[1]
request = json.load(open(os.path.join(directory, "request.json")))
width, height, form = request["width"], request["height"], request["format"]
chroma_w, chroma_h = (width + 1) // 2, (height + 1) // 2
strides = request["strides"]
pointer = ctypes.c_char_p


def buffer(size):
    return ctypes.create_string_buffer(size)


if request["source"] == "rgba":
    rgba = open(os.path.join(directory, "source.rgba"), "rb").read()
    # libyuv's ARGB is B, G, R, A in memory.
    argb = bytearray(len(rgba))
    argb[0::4], argb[1::4], argb[2::4], argb[3::4] = rgba[2::4], rgba[1::4], rgba[0::4], rgba[3::4]
    y, u, v = buffer(width * height), buffer(chroma_w * chroma_h), buffer(chroma_w * chroma_h)
    assert lib.ARGBToI420(pointer(bytes(argb)), width * 4, y, width, u, chroma_w, v, chroma_w, width, height) == 0
    rows = lambda plane, row_bytes, count: [plane.raw[row * row_bytes:(row + 1) * row_bytes] for row in range(count)]
    y_rows, u_rows, v_rows = rows(y, width, height), rows(u, chroma_w, chroma_h), rows(v, chroma_w, chroma_h)
    if form == "i420":
        planes = [y_rows, u_rows, v_rows]
    else:
        first, second = (u_rows, v_rows) if form == "nv12" else (v_rows, u_rows)
        planes = [y_rows, [bytes(b for pair in zip(a, c) for b in pair) for a, c in zip(first, second)]]
    for index, plane in enumerate(planes):
        stride = strides[index]
        data = b"".join(row + bytes(stride - len(row)) for row in plane[:-1]) + plane[-1]
        open(os.path.join(directory, f"plane{index}.bin"), "wb").write(data)

planes = [open(os.path.join(directory, f"plane{index}.bin"), "rb").read() for index in range(3 if form == "i420" else 2)]
constants = {("bt601", "video"): "kYuvI601Constants", ("bt601", "full"): "kYuvJPEGConstants",
             ("bt709", "video"): "kYuvH709Constants", ("bt709", "full"): "kYuvF709Constants"}[(request["colorSpace"], request["range"])]
matrix = ctypes.c_void_p(ctypes.addressof(ctypes.c_uint8.in_dll(lib, constants)))
argb = buffer(width * height * 4)
if form == "i420":
    status = lib.I420ToARGBMatrix(pointer(planes[0]), strides[0], pointer(planes[1]), strides[1], pointer(planes[2]), strides[2],
                                  argb, width * 4, matrix, width, height)
else:
    convert = lib.NV12ToARGBMatrix if form == "nv12" else lib.NV21ToARGBMatrix
    status = convert(pointer(planes[0]), strides[0], pointer(planes[1]), strides[1], argb, width * 4, matrix, width, height)
assert status == 0, f"libyuv refused the frame ({status})"
if request["mirrored"]:
    mirrored = buffer(width * height * 4)
    assert lib.ARGBMirror(argb, width * 4, mirrored, width * 4, width, height) == 0
    argb = mirrored
rotation = request["rotation"]
out_w, out_h = (height, width) if rotation in (90, 270) else (width, height)
if rotation:
    rotated = buffer(width * height * 4)
    assert lib.ARGBRotate(argb, width * 4, rotated, out_w * 4, width, height, rotation) == 0
    argb = rotated
raw = argb.raw
rgb = bytearray(out_w * out_h * 3)
rgb[0::3], rgb[1::3], rgb[2::3] = raw[2::4], raw[1::4], raw[0::4]
open(os.path.join(directory, "libyuv.rgb"), "wb").write(bytes(rgb))
