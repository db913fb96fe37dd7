"""The cases' own MNIST reader (grader/shipped/cases/util.py) reads the
decompressed copy the grader keeps beside each gzip file of its data copy
(grader/sandbox/env.py), and the same bytes as the gzip file."""

from __future__ import annotations

import gzip
import struct

import numpy as np

from grader.core.assignment import Assignment
from grader.sandbox import env
from grader.shipped.cases import util


def idx_images(pixels: np.ndarray) -> bytes:
    n, rows, cols = pixels.shape
    return struct.pack(">IIII", 2051, n, rows, cols) + pixels.astype(np.uint8).tobytes()


def idx_labels(labels: np.ndarray) -> bytes:
    return struct.pack(">II", 2049, len(labels)) + labels.astype(np.uint8).tobytes()


def test_the_reader_takes_the_decompressed_copy_when_there_is_one(tmp_path):
    packed, unpacked = np.zeros((2, 2, 2)), np.full((2, 2, 2), 255)
    (tmp_path / "images.gz").write_bytes(gzip.compress(idx_images(packed)))
    (tmp_path / "labels.gz").write_bytes(gzip.compress(idx_labels(np.array([3, 4]))))
    read = util.read_mnist.__wrapped__  # not the cache: the same paths are read twice
    X, y = read(str(tmp_path / "images.gz"), str(tmp_path / "labels.gz"))
    assert X.shape == (2, 4) and (X == 0).all() and list(y) == [3, 4]
    (tmp_path / env.GUNZIPPED).mkdir()
    (tmp_path / env.GUNZIPPED / "images").write_bytes(idx_images(unpacked))  # differs on purpose
    X, y = read(str(tmp_path / "images.gz"), str(tmp_path / "labels.gz"))
    assert (X == 1).all() and list(y) == [3, 4]  # the labels have no copy: read from the gzip file


def test_the_data_copy_reads_the_same_as_the_course_files():
    data = Assignment.hw1().data
    copy = env.shared_copy(data)
    images, labels = (name.split("/")[-1] for name in util.TEST)
    assert (copy / env.GUNZIPPED / images.removesuffix(".gz")).is_file()
    X, y = util.read_mnist.__wrapped__(str(copy / images), str(copy / labels))
    X0, y0 = util.read_mnist.__wrapped__(str(data / images), str(data / labels))
    assert X.shape == (10000, 784) and X.dtype == np.float32
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
