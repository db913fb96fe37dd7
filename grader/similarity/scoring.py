"""Pairs scored on the fingerprints they share, each weighted by how rare it
is in the class.

A fingerprint of block q (say `EWiseDiv.gradient`) found in df of the N
class submissions weighs log((N + 1) / df) / log((N + 1) / 2), at most 1:
1 when two submissions share it, falling towards 0 as more of the class
has it. It weighs nothing when the handout's own function has it, or (in
a class of at least MIN_CLASS) when more than MAX_SHARE of the class has
it: forced answers (`return a + b`) converge, and must not make
independent solutions look alike. Fingerprints are compared only within
the same block, so a line of one function never matches another's.

A pair's similarity is 2 S / (W_a + W_b): S the weight of the fingerprints
they share, W_x the weight of all of x's, over all graded blocks (so in
[0, 1]); a file's other code (blocks.py) adds what two share to S and to
both W, and nothing it does not share, so padding a copy with code of
one's own cannot dilute its score; other code found in the other side's
graded blocks counts as shared too (once, on its own side, weighing what
it weighs in the blocks that have it, each block counted), so code
hidden outside every block still meets its source; each block gets the same figure on its own fingerprints. Public solutions
are weighed by the class's frequencies (a popular public repository,
forked many times, must not hide the students who copied it) and compared
with each class submission, not with each other.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from grader.core import settings
from grader.similarity.blocks import Block
from grader.similarity.corpus import CLASS, PUBLIC
from grader.similarity.template import is_other

THRESHOLD = settings.THRESHOLD.default  # a pair at or above it is flagged for review (never a verdict)
MAX_SHARE = 0.5  # a fingerprint in more of the class than this weighs nothing
MIN_CLASS = 10  # below this many submissions, frequencies say too little for MAX_SHARE
BLOCK_SHOWN = 0.5  # a block at or above it is listed among a pair's shared blocks


@dataclass(frozen=True)
class BlockPrints:
    block: Block
    prints: tuple  # fingerprints.Print
    hashes: frozenset


@dataclass(frozen=True)
class Fingerprinted:
    name: str
    kind: str
    blocks: dict  # block id -> BlockPrints


@dataclass(frozen=True)
class Pair:
    a: str  # a class submission
    b: str  # another, or a public solution (kind PUBLIC)
    kind: str
    similarity: float
    flagged: bool
    blocks: tuple  # (block id, block similarity), strongest first, those sharing anything
    decision: str = ""  # an instructor's (decisions.py): confirmed, dismissed (then not flagged) or stale
    note: str = ""


def weigh(class_subs, template_prints: dict, max_share: float = MAX_SHARE) -> dict:
    """(block id, hash) -> weight in [0, 1], for every fingerprint of the class."""
    df = defaultdict(int)
    for sub in class_subs:
        for bid, bp in sub.blocks.items():
            for h in bp.hashes:
                df[(bid, h)] += 1
    n = len(class_subs)
    scale = math.log((n + 1) / 2) if n > 1 else 1.0
    weights = {}
    for key, count in df.items():
        if key[1] in template_prints.get(key[0], ()) or (n >= MIN_CLASS and count > max_share * n):
            weights[key] = 0.0
        else:
            weights[key] = min(1.0, math.log((n + 1) / count) / scale) if scale > 0 else 1.0
    weights.update({(bid, h): 0.0 for bid, hashes in template_prints.items() for h in hashes})
    return weights


def weight_of(weights: dict, bid: str, h: int) -> float:
    """A fingerprint no class submission has (a public one's own) weighs 1."""
    return weights.get((bid, h), 1.0)


def _totals(sub: Fingerprinted, weights: dict) -> dict:
    return {bid: sum(weight_of(weights, bid, h) for h in bp.hashes) for bid, bp in sub.blocks.items()}


def _index(subs) -> dict:
    index = defaultdict(list)
    for i, sub in enumerate(subs):
        for bid, bp in sub.blocks.items():
            for h in bp.hashes:
                index[(bid, h)].append(i)
    return index


def _shared_class(index: dict, weights: dict) -> dict:
    """(i, j) -> {block id: shared weight}, i < j, over the class."""
    shared = defaultdict(lambda: defaultdict(float))
    for key, subs in index.items():
        w = weights[key]
        if w <= 0 or len(subs) < 2:
            continue
        for x, i in enumerate(subs):
            for j in subs[x + 1 :]:
                shared[(i, j)][key[0]] += w
    return shared


def _shared_public(index: dict, public_index: dict, weights: dict) -> dict:
    """(class i, public p) -> {block id: shared weight}."""
    shared = defaultdict(lambda: defaultdict(float))
    for key, publics in public_index.items():
        w = weights.get(key, 0.0)
        if w <= 0 or key not in index:
            continue
        for i in index[key]:
            for p in publics:
                shared[(i, p)][key[0]] += w
    return shared


def _graded_hashes(subs, weights: dict) -> dict:
    """hash -> [(submission index, weight)] over the graded blocks (other code
    aside): the weight summed over every graded block that has the hash, as
    that submission's total counts it. Code its graded blocks repeat (a
    helper inlined in two gradients) weighs in its total once per block, so
    it must weigh as much when found in other code, where it need be
    written only once; counted once, it would make a verbatim copy of such a
    source, hidden outside every block, score as if part of it were missing."""
    index = defaultdict(list)
    for i, sub in enumerate(subs):
        total = defaultdict(float)
        for bid, bp in sub.blocks.items():
            if not is_other(bid):
                for h in bp.hashes:
                    total[h] += weight_of(weights, bid, h)
        for h, w in total.items():
            if w > 0:
                index[h].append((i, w))
    return index


def _cross(subs, others, weights: dict) -> dict:
    """(i, j) -> {other code id: weight}: subs[i]'s other code found in
    others[j]'s graded blocks (a copy hidden outside every block, bound in a
    way only running it would tell, still meets its source)."""
    index, cross = _graded_hashes(others, weights), defaultdict(lambda: defaultdict(float))
    for i, sub in enumerate(subs):
        for bid, bp in sub.blocks.items():
            if is_other(bid):
                for h in bp.hashes:
                    if weight_of(weights, bid, h) > 0:
                        for j, w in index.get(h, ()):
                            if j != i or subs is not others:
                                cross[(i, j)][bid] += w
    return cross


def _pair(a, b, kind, shared: dict, totals_a: dict, totals_b: dict, threshold: float, cross=()) -> Pair:
    """`cross`: the other code of either found in the other's graded blocks
    ({other code id: weight} each way), counted once on the side it is in."""
    crossed = defaultdict(float)
    for one_way in cross:
        for bid, w in one_way.items():
            crossed[bid] += w
    both = (
        sum(v for bid, v in totals_a.items() if not is_other(bid))
        + sum(v for bid, v in totals_b.items() if not is_other(bid))
        + 2 * sum(v for bid, v in shared.items() if is_other(bid))
        + sum(crossed.values())
    )
    similarity = min(1.0, 2 * (sum(shared.values()) + sum(crossed.values())) / both) if both > 0 else 0.0
    merged = {bid: shared.get(bid, 0.0) + crossed.get(bid, 0.0) for bid in {*shared, *crossed}}
    blocks = []
    for bid, s in sorted(merged.items(), key=lambda kv: (-kv[1], kv[0])):
        denominator = totals_a.get(bid, 0.0) + totals_b.get(bid, 0.0)
        blocks.append((bid, min(1.0, 2 * s / denominator) if denominator > 0 else 0.0))
    return Pair(a.name, b.name, kind, similarity, similarity >= threshold, tuple(blocks))


def score_pairs(class_subs, public_subs, weights: dict, threshold: float = THRESHOLD) -> list:
    """Every class pair and every (class, public) pair, ranked: most similar
    first, then by kind and names."""
    totals = [_totals(s, weights) for s in class_subs]
    public_totals = [_totals(s, weights) for s in public_subs]
    index = _index(class_subs)
    in_class = _shared_class(index, weights)
    against = _shared_public(index, _index(public_subs), weights)
    cross = _cross(class_subs, class_subs, weights)
    cross_out, cross_in = _cross(class_subs, public_subs, weights), _cross(public_subs, class_subs, weights)
    pairs = []
    for i, a in enumerate(class_subs):
        for j in range(i + 1, len(class_subs)):
            pairs.append(
                _pair(
                    a,
                    class_subs[j],
                    CLASS,
                    in_class.get((i, j), {}),
                    totals[i],
                    totals[j],
                    threshold,
                    (cross.get((i, j), {}), cross.get((j, i), {})),
                )
            )
        for p, b in enumerate(public_subs):
            pairs.append(
                _pair(
                    a,
                    b,
                    PUBLIC,
                    against.get((i, p), {}),
                    totals[i],
                    public_totals[p],
                    threshold,
                    (cross_out.get((i, p), {}), cross_in.get((p, i), {})),
                )
            )
    pairs.sort(key=lambda p: (-p.similarity, p.kind, p.a, p.b))
    return pairs


def matched_lines(a: BlockPrints, b: BlockPrints, weights: dict):
    """(lines of a, lines of b) holding the shared fingerprints that weigh
    something: what the report highlights."""
    shared = {h for h in a.hashes & b.hashes if weight_of(weights, a.block.id, h) > 0}

    def lines(bp):
        return frozenset(n for p in bp.prints if p.hash in shared for n in range(p.first, p.last + 1))

    return lines(a), lines(b)


__all__ = [
    "BlockPrints",
    "Fingerprinted",
    "Pair",
    "weigh",
    "score_pairs",
    "matched_lines",
    "THRESHOLD",
    "MAX_SHARE",
    "CLASS",
    "PUBLIC",
]
