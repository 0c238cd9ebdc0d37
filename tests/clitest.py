"""Helpers shared by the command-line tests: failure bookkeeping and tiny image files.

The PNG writer is independent of docbin's own codecs, so that the tests never
check the library's reader against files written by the library itself.
"""
import struct
import sys
import zlib

failures = []


def check(cond, what):
    """Records a failure (the test goes on, so one run shows every failure)."""
    if not cond:
        failures.append(what)
        print('FAIL:', what, file=sys.stderr)


def png_bytes(w, h, rows, color_type=0, depth=8):
    """A minimal PNG (one IDAT, filter 0) of `rows`, each a bytes object of one row."""
    def chunk(tag, data):
        return struct.pack('>I', len(data)) + tag + data + struct.pack('>I', zlib.crc32(tag + data))
    raw = b''.join(b'\0' + r for r in rows)
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, depth, color_type, 0, 0, 0))
            + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))


def write(path, data):
    """Writes bytes to `path` and returns the path."""
    with open(path, 'wb') as f:
        f.write(data)
    return path
