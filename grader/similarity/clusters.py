"""Groups of submissions linked by flagged pairs: three students who share
one solution show as one cluster, not as three pairs to put together by
hand (as Dolos, JPlag and MOSS users ask for).

A cluster is a connected component of the graph whose edges are the
flagged pairs (class and public solutions alike); its shared blocks are the
blocks that at least two linked members share at or above BLOCK_SHOWN, with
how many members share each. Pure functions of the ranked pairs.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from grader.similarity.scoring import BLOCK_SHOWN


@dataclass(frozen=True)
class Cluster:
    number: int  # 1 for the largest (then the most similar)
    members: tuple  # names: the most linked first, then by name
    links: tuple  # the flagged scoring.Pair within it, ranked
    blocks: tuple  # (block id, members sharing it, best block figure), most shared first

    def linked(self, name: str) -> tuple:
        """The members `name` is flagged with, most similar first."""
        return tuple(p.b if p.a == name else p.a for p in self.links if name in (p.a, p.b))


def _components(edges) -> list:
    parent = {}

    def root(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        parent[root(a)] = root(b)
    groups = defaultdict(set)
    for x in list(parent):
        groups[root(x)].add(x)
    return list(groups.values())


def _shared_blocks(links) -> tuple:
    sharing, best = defaultdict(set), defaultdict(float)
    for p in links:
        for bid, score in p.blocks:
            if score >= BLOCK_SHOWN:
                sharing[bid].update((p.a, p.b))
                best[bid] = max(best[bid], score)
    return tuple(
        sorted(((bid, len(who), best[bid]) for bid, who in sharing.items()), key=lambda t: (-t[1], -t[2], t[0]))
    )


def find_clusters(pairs) -> tuple:
    """The Clusters of the flagged pairs among `pairs` (ranked, as scoring gives them)."""
    flagged = [p for p in pairs if p.flagged]
    found = []
    for group in _components((p.a, p.b) for p in flagged):
        links = tuple(p for p in flagged if p.a in group)
        degree = defaultdict(int)
        for p in links:
            degree[p.a] += 1
            degree[p.b] += 1
        members = tuple(sorted(group, key=lambda n: (-degree[n], n)))
        found.append((members, links, _shared_blocks(links)))
    found.sort(key=lambda c: (-len(c[0]), -c[1][0].similarity, c[0][0]))
    return tuple(Cluster(i, *c) for i, c in enumerate(found, 1))
