"""The clusters in clusters.csv (one row per member) and in the page (each
cluster's members, links and shared blocks, with every member's code of a
shared block side by side, the lines it shares with another member
marked). Pure functions of an Analysis; student text is escaped."""

from __future__ import annotations

from html import escape

from grader.core import csvsafe
from grader.similarity.scoring import matched_lines

CLUSTERS_HEADER = ("cluster", "size", "submission", "kind", "linked to", "strongest", "shared blocks")
SHOWN_MEMBERS = 6  # members shown side by side per shared block (the CSV has all)
SHOWN_BLOCKS = 4  # shared blocks shown side by side per cluster


def blocks_text(cluster) -> str:
    """`nn_epoch 3/3 1.00; MatMul.gradient 2/3 0.91`: members sharing each block, best figure."""
    return "; ".join(f"{bid} {n}/{len(cluster.members)} {best:.2f}" for bid, n, best in cluster.blocks)


def clusters_csv(analysis) -> str:
    rows = [CLUSTERS_HEADER]
    for c in analysis.clusters:
        for name in c.members:
            strongest = max(p.similarity for p in c.links if name in (p.a, p.b))
            rows.append(
                (
                    csvsafe.Number(str(c.number)),
                    csvsafe.Number(str(len(c.members))),
                    name,
                    analysis.submissions[name].kind,
                    "; ".join(c.linked(name)),
                    csvsafe.Number(f"{strongest:.4f}"),
                    blocks_text(c),
                )
            )
    return csvsafe.render(rows)


def _marked(analysis, cluster, name: str, bid: str) -> frozenset:
    """Lines of `name`'s block `bid` sharing weighted fingerprints with another member's."""
    mine = analysis.fingerprinted[name].blocks[bid]
    lines = set()
    for other in cluster.members:
        theirs = analysis.fingerprinted[other].blocks.get(bid)
        if other != name and theirs is not None:
            lines |= matched_lines(mine, theirs, analysis.weights)[0]
    return frozenset(lines)


def cluster_html(analysis, cluster, side) -> str:
    """One cluster's section; `side(analysis, name, block prints, marked lines)` renders one member's code."""
    links = ", ".join(f"{escape(p.a)} and {escape(p.b)} {p.similarity:.2f}" for p in cluster.links)
    parts = [
        f'<section class="cluster" id="cluster-{cluster.number}"><h3>Cluster {cluster.number}: '
        f"{len(cluster.members)} submissions</h3><p>{', '.join(map(escape, cluster.members))}</p>"
        f'<p class="note">flagged links: {links}</p><p>shared blocks: {escape(blocks_text(cluster))}</p>'
    ]
    for bid, _, _ in cluster.blocks[:SHOWN_BLOCKS]:
        having = [n for n in cluster.members if bid in analysis.fingerprinted[n].blocks][:SHOWN_MEMBERS]
        sides = "".join(
            side(analysis, n, analysis.fingerprinted[n].blocks[bid], _marked(analysis, cluster, n, bid)) for n in having
        )
        parts.append(
            f'<div class="block" data-block="{escape(bid)}"><h4>{escape(bid)}</h4>'
            f'<div class="sides">{sides}</div></div>'
        )
    parts.append("</section>")
    return "\n".join(parts)


def clusters_html(analysis, side) -> str:
    if not analysis.clusters:
        return '<p id="clusters">none: no pair is flagged</p>'
    table = "".join(
        f'<tr><td class="num"><a href="#cluster-{c.number}">{c.number}</a></td>'
        f'<td class="num">{len(c.members)}</td><td>{escape(", ".join(c.members))}</td>'
        f"<td>{escape(blocks_text(c))}</td></tr>"
        for c in analysis.clusters
    )
    sections = "\n".join(cluster_html(analysis, c, side) for c in analysis.clusters)
    return (
        f'<table id="clusters"><thead><tr><th>#</th><th>size</th><th>submissions</th><th>shared blocks</th>'
        f"</tr></thead><tbody>{table}</tbody></table>\n{sections}"
    )
