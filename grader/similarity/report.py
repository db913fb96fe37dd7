"""What `grader similarity` writes, as pure functions of an Analysis:
similarity.csv (every pair, ranked), index.html (the ranked pairs, and the
top ones side by side, per block, the shared lines marked) and
fingerprints.json (every block's fingerprints, with what they were taken
with, to compare with later semesters).

Every name and line of code in the page comes from students: all of it is
escaped. The page is one file: inline CSS, no script, nothing fetched.
"""

from __future__ import annotations

import json
from html import escape

from grader.core import csvsafe
from grader.similarity import fingerprints, tokens
from grader.similarity.cluster_report import clusters_html
from grader.similarity.scoring import BLOCK_SHOWN, matched_lines, weight_of
from grader.similarity.template import is_other

CSV_HEADER = (
    "submission",
    "other",
    "similarity",
    "shared blocks",
    "kind",
    "flagged",
    "decision",
    "note",
    "submission_code",
    "other_code",
)
FORMAT = "needle-grader similarity fingerprints"
FORMAT_VERSION = 1
SHOWN = 300  # pairs listed in the page (the CSV has all)
DETAILED = 40  # of those, the first ones shown side by side (flagged ones always, up to SHOWN)


def _figure(x: float) -> str:
    return f"{x:.4f}"


def shared_blocks(pair) -> str:
    """`nn_epoch 1.00; MatMul.gradient 0.87`: the blocks at or above
    BLOCK_SHOWN, strongest first."""
    return "; ".join(f"{bid} {score:.2f}" for bid, score in pair.blocks if score >= BLOCK_SHOWN)


def flag_line(flag) -> str:
    """`review: alice: apps/simple_ml.py: nn_epoch runs _mine (...)`."""
    where = f"{flag.file}: " if flag.file else ""
    return f"review: {flag.name}: {where}{flag.reason}"


def csv_text(analysis) -> str:
    rows = [CSV_HEADER]
    for p in analysis.pairs:
        rows.append(
            (
                p.a,
                p.b,
                csvsafe.Number(_figure(p.similarity)),
                shared_blocks(p),
                p.kind,
                "yes" if p.flagged else "no",
                p.decision,
                p.note,
                analysis.codes[p.a],
                analysis.codes[p.b],
            )
        )
    return csvsafe.render(rows)


def fingerprints_json(analysis) -> str:
    s = analysis.settings
    subs = []
    for name in sorted(analysis.fingerprinted):
        fp = analysis.fingerprinted[name]
        blocks = {
            bid: {
                "file": bp.block.file,
                "found_by": bp.block.how,
                "prints": [[f"{p.hash:016x}", p.first, p.last] for p in bp.prints],
            }
            for bid, bp in fp.blocks.items()
        }
        subs.append({"name": name, "kind": fp.kind, "blocks": blocks})
    document = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "hash": fingerprints.HASH,
        "k": s.k,
        "w": s.w,
        "normalisation": tokens.NORMALISATION,
        "submissions": subs,
    }
    return json.dumps(document, sort_keys=True, separators=(",", ":")) + "\n"


STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse}td,th{padding:.2em .6em;border-bottom:1px solid #ddd;text-align:left}
tr.flagged td{background:#fff3e0}td.num{text-align:right;font-variant-numeric:tabular-nums}
.sides{display:flex;gap:1em}.side{flex:1;min-width:0}.who{font-weight:600;margin:.3em 0}
pre{background:#f7f7f7;padding:.5em;overflow-x:auto;margin:0}
.ln{display:inline-block;width:3.5em;color:#888;user-select:none}
mark.match{background:#ffd54f;display:inline-block;width:100%}
.gap{color:#888}section.pair,section.cluster{border-top:2px solid #999;margin-top:2em}
.note{color:#555}li.flag{color:#8a3b00}.decision{font-weight:600}.stale{color:#b00}
"""


def _block_code(analysis, name: str, bp, marked: frozenset) -> str:
    text = analysis.submissions[name].files.get(bp.block.file, "")
    lines, out, previous = tokens.source_lines(text), [], None
    for n in sorted(set(bp.block.lines)):
        if previous is not None and n != previous + 1:
            out.append('<span class="gap">…</span>')
        code = f'<span class="ln">{n}</span>{escape(lines[n - 1] if n <= len(lines) else "")}'
        out.append(f'<mark class="match">{code}</mark>' if n in marked else code)
        previous = n
    return "\n".join(out)


def _side(analysis, name: str, bp, marked) -> str:
    how = "" if bp.block.how == "markers" else f" (found by {bp.block.how})"
    return (
        f'<div class="side"><div class="who">{escape(name)} · {escape(bp.block.file)}{escape(how)}</div>'
        f"<pre><code>{_block_code(analysis, name, bp, marked)}</code></pre></div>"
    )


def _detail(analysis, rank: int, pair) -> str:
    a, b = analysis.fingerprinted[pair.a], analysis.fingerprinted[pair.b]
    parts = [
        f'<section class="pair" id="pair-{rank}"><h3>{rank}. {escape(pair.a)} and {escape(pair.b)} '
        f"({pair.kind}): {pair.similarity:.2f}</h3>"
    ]
    for bid, score in pair.blocks:
        left, right = a.blocks.get(bid), b.blocks.get(bid)
        if left is None or right is None:  # one side's other code, found in the other's graded blocks
            parts.append(_one_sided(analysis, *((pair.a, left, b) if left else (pair.b, right, a)), bid, score))
            continue
        marked_a, marked_b = matched_lines(left, right, analysis.weights)
        parts.append(
            f'<div class="block" data-block="{escape(bid)}"><h4>{escape(bid)}: {score:.2f}</h4>'
            f'<div class="sides">{_side(analysis, pair.a, left, marked_a)}'
            f"{_side(analysis, pair.b, right, marked_b)}</div></div>"
        )
    parts.append("</section>")
    return "\n".join(parts)


def _one_sided(analysis, name: str, bp, other, bid: str, score: float) -> str:
    graded = {
        h: b
        for b, other_bp in other.blocks.items()
        if not is_other(b)
        for h in other_bp.hashes
        if weight_of(analysis.weights, b, h) > 0
    }
    marked = frozenset(
        n
        for p in bp.prints
        if p.hash in graded and weight_of(analysis.weights, bid, p.hash) > 0
        for n in range(p.first, p.last + 1)
    )
    where = sorted({graded[p.hash] for p in bp.prints if p.hash in graded})
    return (
        f'<div class="block" data-block="{escape(bid)}"><h4>{escape(bid)}: {score:.2f}</h4>'
        f'<div class="sides">{_side(analysis, name, bp, marked)}<div class="side"><div class="who">'
        f"{escape(other.name)}: found in its blocks {escape(', '.join(where))}</div></div></div></div>"
    )


def _row(rank: int, pair, detailed: bool) -> str:
    other = f'<a href="#pair-{rank}">{escape(pair.b)}</a>' if detailed else escape(pair.b)
    return (
        f'<tr class="pair{" flagged" if pair.flagged else ""}"><td class="num">{rank}</td>'
        f"<td>{escape(pair.a)}</td><td>{other}</td><td>{pair.kind}</td>"
        f'<td class="num">{pair.similarity:.2f}</td><td>{escape(shared_blocks(pair))}</td>'
        f"<td>{'review' if pair.flagged else ''}</td><td>{_decided(pair)}</td></tr>"
    )


def _decided(pair) -> str:
    if not pair.decision:
        return ""
    note = f": {escape(pair.note)}" if pair.note else ""
    return f'<span class="decision {pair.decision}">{pair.decision}</span>{note}'


def html_text(analysis, shown: int = SHOWN, detailed: int = DETAILED) -> str:
    listed = [p for p in analysis.pairs if p.similarity > 0][:shown]
    detail = {rank for rank, p in enumerate(listed, 1) if rank <= detailed or p.flagged}
    kinds = [s.kind for s in analysis.submissions.values()]
    s = analysis.settings
    head = (
        f"<p>{kinds.count('class')} submissions, {kinds.count('public')} public solutions; only what "
        f"students wrote is compared: per graded function the code that runs for it (its solution block, or "
        f"what it was rebound to), and the rest of the files apart from the handout's lines; names and literals "
        f"abstracted; code most of the class shares weighs little or nothing. k={s.k}, w={s.w}, "
        f"flagged at {s.threshold:.2f} and above: <strong>a flag asks for a look, never a verdict"
        f"</strong>. {len(analysis.pairs) - len(listed)} more pairs, less similar, are in similarity.csv."
        "</p>"
    )
    rows = "\n".join(_row(rank, p, rank in detail) for rank, p in enumerate(listed, 1))
    notes = "".join(f'<li class="note">{escape(n)}</li>' for n in analysis.notes) or "<li>none</li>"
    flags = "".join(f'<li class="flag">{escape(flag_line(f))}</li>' for f in analysis.flags) or "<li>none</li>"
    details = "\n".join(_detail(analysis, rank, p) for rank, p in enumerate(listed, 1) if rank in detail)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>Similarity</title><style>{STYLE}</style></head><body>\n<h1>Similarity of solution blocks</h1>\n"
        f'{head}\n<h2>Ranked pairs</h2>\n<table id="pairs"><thead><tr><th>#</th><th>submission</th>'
        "<th>other</th><th>kind</th><th>similarity</th><th>shared blocks</th><th>flag</th><th>decision</th>"
        "</tr></thead>"
        f"<tbody>\n{rows}\n</tbody></table>\n<h2>Clusters</h2>\n{clusters_html(analysis, _side)}\n"
        "<h2>Submissions to review whatever they score</h2>\n"
        f'<ul id="flags">{flags}</ul>\n<h2>Notes</h2>\n<ul id="notes">{notes}</ul>\n'
        f"<h2>Side by side</h2>\n{details}\n</body></html>\n"
    )
