"""Fingerprints of a block: winnowing (Schleimer, Wilkerson and Aiken,
SIGMOD 2003, as MOSS and Dolos use it) over hashes of its k-grams of
normalised tokens.

Every k consecutive tokens are hashed; of every w consecutive hashes the
smallest is kept (the rightmost on a tie), so two blocks sharing a run of
at least w + k - 1 tokens share a fingerprint. A block shorter than k
tokens has one fingerprint, of all its tokens.

The hash is blake2b cut to 64 bits over the tokens' UTF-8 text: the same in
every process, on every machine and Python version (Python's own `hash()`
is salted per process), so fingerprints written once can be compared with
next semester's. K, W, HASH and tokens.NORMALISATION are recorded beside
them: fingerprints taken with others do not compare.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

K = 5  # tokens per k-gram: hw1's blocks are short (a one-line compute is 5 to 10 tokens)
W = 4  # k-grams per window: a shared run of W + K - 1 = 8 tokens is always seen
HASH = "blake2b-64"
SEPARATOR = "\x1f"  # between tokens in the hashed text: no token contains it


@dataclass(frozen=True)
class Print:
    hash: int
    first: int  # the student file's line of the k-gram's first token
    last: int  # and of its last


def stable_hash(tokens) -> int:
    """64-bit blake2b of the tokens joined: identical in every process."""
    data = SEPARATOR.join(tokens).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def winnow(hashes: list, w: int = W) -> list:
    """Indices of the hashes winnowing keeps: the minimum of each window of
    w (rightmost on ties), each index once, in order."""
    if not hashes:
        return []
    if len(hashes) <= w:
        low = min(hashes)
        return [max(i for i, h in enumerate(hashes) if h == low)]
    kept = []
    for start in range(len(hashes) - w + 1):
        window = hashes[start : start + w]
        low = min(window)
        pick = start + max(i for i, h in enumerate(window) if h == low)
        if not kept or kept[-1] != pick:
            kept.append(pick)
    return kept


def fingerprint(stream, k: int = K, w: int = W) -> tuple:
    """The Prints of a block's (token, line) stream."""
    stream = list(stream)
    if not stream:
        return ()
    texts = [t for t, _ in stream]
    if len(stream) < k:
        return (Print(stable_hash(texts), stream[0][1], stream[-1][1]),)
    hashes = [stable_hash(texts[i : i + k]) for i in range(len(stream) - k + 1)]
    return tuple(Print(hashes[i], stream[i][1], stream[i + k - 1][1]) for i in winnow(hashes, w))


def fingerprint_block(block, k: int = K, w: int = W) -> tuple:
    """The Prints of a Block: each of its segments (code from one place)
    winnowed apart, so no k-gram joins two functions."""
    return tuple(p for segment in block.segments() for p in fingerprint(segment, k, w))
