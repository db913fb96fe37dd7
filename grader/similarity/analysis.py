"""From folders to ranked pairs: read the submissions, find their solution
blocks, fingerprint them, weigh the fingerprints by the class, score the
pairs. Everything the report writers need ends up in one Analysis."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grader.similarity import fingerprints, tokens
from grader.similarity.blocks import Flag, read_file
from grader.similarity.clusters import find_clusters
from grader.similarity.corpus import CLASS, PUBLIC, Submission, read_folder
from grader.similarity.decisions import apply, code_of, pinned
from grader.similarity.scoring import MAX_SHARE, THRESHOLD, BlockPrints, Fingerprinted, score_pairs, weigh
from grader.similarity.template import Template, is_other


@dataclass(frozen=True)
class Settings:
    threshold: float = THRESHOLD
    max_share: float = MAX_SHARE
    k: int = fingerprints.K
    w: int = fingerprints.W


@dataclass(frozen=True)
class Analysis:
    settings: Settings
    block_ids: tuple  # the template's blocks, in file order
    submissions: dict  # name -> Submission (class and public; names are distinct)
    fingerprinted: dict  # name -> Fingerprinted
    weights: dict  # (block id, hash) -> weight
    pairs: tuple  # scoring.Pair, ranked
    notes: tuple  # what could not be read, or was read by a fallback
    flags: tuple = ()  # blocks.Flag: submissions asking for a look whatever they score
    clusters: tuple = ()  # clusters.Cluster: submissions linked by flagged pairs
    codes: dict = None  # name -> sha256 of its student files (decisions.code_of)
    decisions: tuple = ()  # decisions.Decision in force, blank codes pinned to this run's


EMPTY_NOTE = "{name}: no solution block filled in and nothing else written: nothing to compare"
OWN_CODE_FLAG = (
    "fills no solution block, yet has code of its own outside them ({which}): it may pass cases "
    "through bindings only running it would tell; not an empty submission"
)
ELSEWHERE_FLAG = (
    "fills no solution block, yet {count} graded functions run code written elsewhere in its "
    "files ({which}): it may pass cases; not an empty submission"
)


def fingerprint_submission(sub: Submission, template: Template, settings: Settings):
    """(Fingerprinted, notes, flags): every block of every student file; a
    file that does not tokenize is left out with a note."""
    blocks, notes, flags, filled = {}, [], [], 0
    for tfile in template.files:
        if tfile.rel not in sub.files:
            continue
        try:
            found = read_file(sub.files[tfile.rel], tfile.rel, tfile, template, sub.name)
        except tokens.SourceError as exc:
            notes.append(f"{sub.name}: {exc}; its blocks are left out")
            continue
        notes.extend(found.notes)
        flags.extend(found.flags)
        filled += found.filled
        for block in found.blocks:
            prints = fingerprints.fingerprint_block(block, settings.k, settings.w)
            blocks[block.id] = BlockPrints(block, prints, frozenset(p.hash for p in prints))
    graded = [b for b in blocks if not is_other(b)]
    if not filled and blocks:
        which = graded or list(blocks)
        flags.append(
            Flag(
                sub.name,
                "",
                (ELSEWHERE_FLAG if graded else OWN_CODE_FLAG).format(
                    count=len(which), which=", ".join(which[:6]) + (", ..." if len(which) > 6 else "")
                ),
            )
        )
    if not blocks and not notes:
        notes.append(EMPTY_NOTE.format(name=sub.name))
    return Fingerprinted(sub.name, sub.kind, blocks), notes, flags


def template_prints(template: Template, settings: Settings) -> dict:
    """block id -> the hashes of the handout's own function (weigh nothing);
    for a file's other code, of the handout's whole file."""
    found = {
        template.block_id(f.rel, q): frozenset(
            p.hash for p in fingerprints.fingerprint(f.given_tokens[q], settings.k, settings.w)
        )
        for f in template.files
        for q in f.blocks
    }
    for f in template.files:
        found[f.other_id] = frozenset(p.hash for p in fingerprints.fingerprint(f.file_tokens, settings.k, 1))
    return found


def _public_names(public: list, taken: set) -> list:
    """Public solutions keep their names unless a class submission has it:
    then `public:NAME`."""
    return [Submission(s.name if s.name not in taken else f"public:{s.name}", s.kind, s.files) for s in public]


def compare(
    class_subs, public_subs, template: Template, settings: Settings = Settings(), notes=(), decided=()
) -> Analysis:
    """The Analysis of submissions already read (public ones named apart),
    with the instructor's decisions (`decided`) applied."""
    notes, printed, flags = list(notes), {}, []
    for sub in [*class_subs, *public_subs]:
        printed[sub.name], said, flagged = fingerprint_submission(sub, template, settings)
        notes += said
        flags += flagged
    class_prints = [printed[s.name] for s in class_subs]
    weights = weigh(class_prints, template_prints(template, settings), settings.max_share)
    pairs = score_pairs(class_prints, [printed[s.name] for s in public_subs], weights, settings.threshold)
    subs = {s.name: s for s in [*class_subs, *public_subs]}
    codes = {name: code_of(s.files) for name, s in subs.items()}
    decided = pinned(decided, codes)
    pairs, said = apply(pairs, decided, codes)
    return Analysis(
        settings,
        template.block_ids(),
        subs,
        printed,
        weights,
        pairs,
        tuple(notes + said),
        tuple(flags),
        find_clusters(pairs),
        codes,
        decided,
    )


def analyse(
    folder: Path, against, template: Template, settings: Settings = Settings(), student_files=(), exclude=(), decided=()
) -> Analysis:
    """The whole comparison of `folder`'s submissions (and, with `against`,
    each of them with that folder's public solutions)."""
    student_files = student_files or tuple(f.rel for f in template.files)
    class_subs, notes = read_folder(folder, CLASS, student_files, exclude)
    public_subs = []
    if against is not None:
        public_subs, said = read_folder(against, PUBLIC, student_files, exclude)
        notes += said
        public_subs = _public_names(public_subs, {s.name for s in class_subs})
    return compare(class_subs, public_subs, template, settings, notes, decided)
