#!/usr/bin/python3
"""Seeds for tests/fuzz/fuzz_api.c (run from the repository root).

Each seed is gearrt_options (threads, shape_cache, no_gears: int32 LE), a
byte taken off the input's size, and a .npy file.

  corpus_api/   files numpy writes (<U strings for the model's input,
                float32, int64) under options in range.
  regress_api/  the cases issue 25 found: threads = 100000 and
                shape_cache = INT_MAX (a crash and an abort before they
                were statuses), and .npy headers that misled the strstr
                reader ('fortran_order' inside another key's string,
                'Falsey', a shape whose size overflows, a negative dim),
                a <U element with a NUL inside, a surrogate code point,
                a string input whose size is cut short.
"""
import io
import os
import struct

import numpy


def npy(a):
    b = io.BytesIO()
    numpy.save(b, a)
    return b.getvalue()


def raw(header, body=b""):
    h = header.encode() + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + body


def seed(threads=0, cache=0, no_gears=0, cut=0, body=b""):
    return struct.pack("<iiiB", threads, cache, no_gears, cut) + body


def write(d, name, data):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


words = numpy.array(["Monday", "tuesday", "x"])
corpus = {
    "strings": seed(body=npy(words)),
    "strings_most_options": seed(256, 1024, 0, 0, npy(words)),
    "strings_unicode": seed(2, -1, 1, 0,
                            npy(numpy.array(["\u00e9t\u00e9", "", "\u2603"]))),
    "float32": seed(body=npy(numpy.arange(3, dtype=numpy.float32))),
    "int64_2d": seed(body=npy(numpy.arange(6, dtype=numpy.int64)
                              .reshape(2, 3))),
}
f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }"
regress = {
    "threads_100000": seed(100000, 0, 0, 0, npy(words)),
    "shape_cache_int_max": seed(0, 2**31 - 1, 0, 0, npy(words)),
    "threads_negative": seed(-1, 0, 0, 0, npy(words)),
    "key_in_string": seed(body=raw(
        "{'descr': '<f4', 'x': \"'fortran_order': False, 'shape': (1,)\", "
        "'fortran_order': True, 'shape': (3,), }", bytes(12))),
    "falsey": seed(body=raw(
        "{'descr': '<f4', 'fortran_order': Falsey, 'shape': (3,), }",
        bytes(12))),
    "shape_overflow": seed(body=raw(f4 % "(1099511627776, 1099511627776)",
                                    bytes(4))),
    "shape_negative": seed(body=raw(f4 % "(2, -3)", bytes(4))),
    "unicode_nul_inside": seed(body=raw(
        "{'descr': '<U3', 'fortran_order': False, 'shape': (), }",
        struct.pack("<3I", 0x61, 0, 0x62))),
    "unicode_surrogate": seed(body=raw(
        "{'descr': '<U1', 'fortran_order': False, 'shape': (3,), }",
        struct.pack("<3I", 0x61, 0xD800, 0x62))),
    "strings_size_cut": seed(0, 0, 0, 9, npy(words)),
}
for name, data in corpus.items():
    write("tests/fuzz/corpus_api", name, data)
for name, data in regress.items():
    write("tests/fuzz/regress_api", name, data)
