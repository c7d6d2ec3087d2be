"""A small PNG decoder (numpy + zlib) for paddle.dataset when neither OpenCV nor Pillow is installed: 8-bit
grayscale, gray+alpha, RGB, RGBA and palette images, not interlaced. Returns the pixel rows as Pillow's
np.array(Image.open(f)) does: (H, W) for grayscale and palette images (palette indices), (H, W, C) otherwise."""

import struct
import zlib

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def is_png(data):
    return bytes(data[:8]) == SIGNATURE


def _unfilter(raw, height, stride, bpp):
    out = np.zeros((height, stride), np.uint8)
    prev = np.zeros(stride, np.int32)
    pos = 0
    for y in range(height):
        ftype = raw[pos]
        line = np.frombuffer(raw, np.uint8, stride, pos + 1).astype(np.int32)
        pos += stride + 1
        if ftype == 0:
            cur = line
        elif ftype == 2:
            cur = (line + prev) & 0xFF
        else:
            cur = np.zeros(stride, np.int32)
            for x in range(stride):   # Sub, Average and Paeth depend on the pixel to the left
                a = cur[x - bpp] if x >= bpp else 0
                b = prev[x]
                if ftype == 1:
                    pred = a
                elif ftype == 3:
                    pred = (a + b) >> 1
                elif ftype == 4:
                    c = prev[x - bpp] if x >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                else:
                    raise ValueError("PNG: unknown filter type %d in row %d" % (ftype, y))
                cur[x] = (line[x] + pred) & 0xFF
        out[y] = cur
        prev = cur
    return out


def decode(data, expand_palette=False):
    """-> pixel array; with expand_palette a palette image comes back as (H, W, 3) RGB."""
    data = bytes(data)
    if not is_png(data):
        raise ValueError("not a PNG file")
    pos, idat, header, palette = 8, [], None, None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            palette = np.frombuffer(body, np.uint8).reshape(-1, 3)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError("PNG: no IHDR chunk")
    width, height, depth, ctype, _, _, interlace = header
    if depth != 8 or interlace or ctype not in _CHANNELS:
        raise ValueError("PNG: only 8-bit, non-interlaced images are decoded here (got bit depth %d, color type %d, "
                         "interlace %d); install opencv-python or Pillow for others" % (depth, ctype, interlace))
    ch = _CHANNELS[ctype]
    rows = _unfilter(zlib.decompress(b"".join(idat)), height, width * ch, ch)
    img = rows.reshape(height, width, ch)
    if ctype == 3 and expand_palette:
        if palette is None:
            raise ValueError("PNG: palette image without a PLTE chunk")
        return palette[img[:, :, 0]]
    return img[:, :, 0] if ch == 1 else img


def color_type(data):
    """The PNG color type (0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA)."""
    return struct.unpack(">IIBBBBB", bytes(data)[16:29])[3]
