"""A submission's git objects, read as files: is the commit its .git names
really there, and are the files graded the ones it holds?

Student repositories are hostile, so no git command (and no hook, filter or
config of theirs) ever runs on one: loose objects are zlib streams at
`.git/objects/xx/yyyy`, packed ones are found through each pack's index
(version 2) and read from the pack, deltas (OFS_DELTA and REF_DELTA)
applied here. Every object read is checked against its name (the SHA-1 of
its header and content), so a forged object cannot stand in for a real
one. Nothing is followed out of the submission: no link (file or folder),
no `objects/info/alternates` (which could name the grader's own
repository, where the claimed commit does exist), and every read is capped
(object size, delta chain, index size).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import struct
import zlib
from pathlib import Path

MAX_OBJECT = 32 << 20  # bytes of one object, inflated
MAX_INDEX = 64 << 20  # bytes of one pack index
MAX_PACKS = 64
MAX_DEPTH = 64  # delta chain
MAX_TOTAL = 256 << 20  # bytes inflated in all for one check (a chain of large deltas included)
HEX40 = re.compile(r"^[0-9a-f]{40}$")
TYPES = {1: b"commit", 2: b"tree", 3: b"blob", 4: b"tag"}
OFS_DELTA, REF_DELTA = 6, 7
IDX_MAGIC = b"\xfftOc"


class GitObjectError(ValueError):
    """An object that is missing, malformed or not what its name says."""


def _real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _open(path: Path):
    """A regular file opened without following a link; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    f = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
        f.close()
        return None
    return f


def _inflate(data_or_file, limit: int) -> bytes:
    """zlib-inflate at most `limit` bytes from bytes or a file at its position."""
    d = zlib.decompressobj()
    out = bytearray()
    chunks = [data_or_file] if isinstance(data_or_file, bytes) else iter(lambda: data_or_file.read(1 << 16), b"")
    try:
        for chunk in chunks:
            out += d.decompress(chunk, limit + 1 - len(out))
            if len(out) > limit:
                raise GitObjectError(f"an object inflates past {limit} bytes")
            if d.eof:
                return bytes(out)
    except zlib.error as exc:
        raise GitObjectError(f"not a zlib stream ({exc})") from None
    raise GitObjectError("a truncated zlib stream")


def object_id(kind: bytes, content: bytes) -> str:
    """git's name for an object: SHA-1 of `kind size\\0content`."""
    return hashlib.sha1(kind + b" %d\0" % len(content) + content).hexdigest()


class _Pack:
    def __init__(self, idx_path: Path, pack_path: Path):
        self.pack_path = pack_path
        self.offsets = {}
        f = _open(idx_path)
        if f is None:
            return
        with f:
            data = f.read(MAX_INDEX + 1)
        if len(data) > MAX_INDEX or data[:4] != IDX_MAGIC or struct.unpack(">I", data[4:8])[0] != 2:
            return  # version 1 indexes (git before 1.5.2) are not read: their objects count as missing
        n = struct.unpack(">I", data[8 + 255 * 4 : 8 + 256 * 4])[0]
        names, crc = 8 + 256 * 4, 8 + 256 * 4 + 20 * n
        small, large = crc + 4 * n, crc + 8 * n
        if len(data) < large:
            return
        for i in range(n):
            off = struct.unpack(">I", data[small + 4 * i : small + 4 * i + 4])[0]
            if off & 0x80000000:
                at = large + 8 * (off & 0x7FFFFFFF)
                off = struct.unpack(">Q", data[at : at + 8])[0] if at + 8 <= len(data) else -1
            self.offsets[data[names + 20 * i : names + 20 * i + 20].hex()] = off


class ObjectStore:
    """The objects of one .git folder (loose and packed), by name."""

    def __init__(self, git_dir: Path):
        self.git = Path(git_dir)
        self.packs, self.budget = [], MAX_TOTAL
        pack_dir = self.git / "objects" / "pack"
        if _real_dir(self.git / "objects") and _real_dir(pack_dir):
            for idx in sorted(pack_dir.glob("pack-*.idx"))[:MAX_PACKS]:
                pack = idx.with_suffix(".pack")
                if not idx.is_symlink() and not pack.is_symlink():
                    self.packs.append(_Pack(idx, pack))

    def read(self, name: str, depth: int = 0):
        """(kind, content) of an object whose content hashes to `name`."""
        if not HEX40.match(name):
            raise GitObjectError(f"{name!r} is not an object name")
        found = self._loose(name)
        if found is None:
            found = self._packed(name, depth)
        if found is None:
            raise GitObjectError(f"object {name} is not in the repository")
        kind, content = found
        if object_id(kind, content) != name:
            raise GitObjectError(f"object {name} does not hash to its name (forged)")
        return kind, content

    def _loose(self, name: str):
        folder = self.git / "objects" / name[:2]
        if not (_real_dir(self.git / "objects") and _real_dir(folder)):
            return None
        f = _open(folder / name[2:])
        if f is None:
            return None
        with f:
            raw = self._spend(_inflate(f, MAX_OBJECT + 64))
        header, sep, content = raw.partition(b"\0")
        kind, _, size = header.partition(b" ")
        if not sep or kind not in TYPES.values() or not size.isdigit() or int(size) != len(content):
            raise GitObjectError(f"object {name}: malformed loose object")
        return kind, content

    def _packed(self, name: str, depth: int):
        for pack in self.packs:
            if name in pack.offsets:
                f = _open(pack.pack_path)
                if f is None:
                    continue
                with f:
                    return self._entry(f, pack, pack.offsets[name], depth)
        return None

    def _entry(self, f, pack: _Pack, offset: int, depth: int):
        """(kind, content) of the pack entry at `offset`, deltas applied."""
        if depth > MAX_DEPTH or offset < 12:
            raise GitObjectError("a delta chain too deep or an entry outside the pack")
        f.seek(offset)
        head = f.read(32)
        if not head:
            raise GitObjectError("an entry past the end of the pack")
        kind, size, i = (head[0] >> 4) & 7, head[0] & 15, 1
        shift = 4
        while head[i - 1] & 0x80:
            size, shift, i = size | ((head[i] & 0x7F) << shift), shift + 7, i + 1
        if size > MAX_OBJECT:
            raise GitObjectError(f"a packed object of {size} bytes")
        if kind in TYPES:
            f.seek(offset + i)
            return TYPES[kind], self._sized(f, size)
        if kind == OFS_DELTA:
            c = head[i]
            back, i = c & 0x7F, i + 1
            while c & 0x80:
                c = head[i]
                back, i = ((back + 1) << 7) | (c & 0x7F), i + 1
            f.seek(offset + i)
            delta = self._sized(f, size)
            base_kind, base = self._entry(f, pack, offset - back, depth + 1)
        elif kind == REF_DELTA:
            base_name = head[i : i + 20].hex()
            f.seek(offset + i + 20)
            delta = self._sized(f, size)
            base_kind, base = self.read(base_name, depth + 1)
        else:
            raise GitObjectError(f"a pack entry of unknown type {kind}")
        return base_kind, apply_delta(base, delta)

    def _sized(self, f, size: int) -> bytes:
        data = self._spend(_inflate(f, size))
        if len(data) != size:
            raise GitObjectError("a pack entry whose size is not its header's")
        return data

    def _spend(self, data: bytes) -> bytes:
        self.budget -= len(data)
        if self.budget < 0:
            raise GitObjectError(f"the objects inflate past {MAX_TOTAL} bytes in all")
        return data


def _varint(data: bytes, i: int):
    value, shift = 0, 0
    while True:
        if i >= len(data):
            raise GitObjectError("a truncated delta")
        c = data[i]
        value, shift, i = value | ((c & 0x7F) << shift), shift + 7, i + 1
        if not c & 0x80:
            return value, i


def apply_delta(base: bytes, delta: bytes) -> bytes:
    """git's delta format: the base's size, the result's, then copy and insert orders."""
    source, i = _varint(delta, 0)
    target, i = _varint(delta, i)
    if source != len(base) or target > MAX_OBJECT:
        raise GitObjectError("a delta for another base")
    out = bytearray()
    while i < len(delta):
        op, i = delta[i], i + 1
        if op & 0x80:
            fields = []
            for bit in range(7):
                if op & (1 << bit):
                    if i >= len(delta):
                        raise GitObjectError("a truncated delta")
                    fields.append(delta[i] << (8 * (bit if bit < 4 else bit - 4)))
                    i += 1
                else:
                    fields.append(0)
            start, length = sum(fields[:4]), sum(fields[4:]) or 0x10000
            if start + length > len(base):
                raise GitObjectError("a delta copying past its base")
            out += base[start : start + length]
        elif op:
            out += delta[i : i + op]
            i += op
        else:
            raise GitObjectError("a delta with a reserved order")
    if len(out) != target:
        raise GitObjectError("a delta whose result is not its size")
    return bytes(out)


def tree_entries(content: bytes) -> dict:
    """name -> (mode, object name) of a tree object."""
    entries, i = {}, 0
    while i < len(content):
        space = content.find(b" ", i)
        nul = content.find(b"\0", space)
        if space < 0 or nul < 0 or nul + 21 > len(content):
            raise GitObjectError("a malformed tree")
        entries[content[space + 1 : nul].decode("utf-8", "replace")] = (
            content[i:space].decode(),
            content[nul + 1 : nul + 21].hex(),
        )
        i = nul + 21
    return entries


def commit_tree(store: ObjectStore, commit: str) -> str:
    kind, content = store.read(commit)
    if kind != b"commit":
        raise GitObjectError(f"{commit} is a {kind.decode()}, not a commit")
    first = content.split(b"\n", 1)[0]
    if not first.startswith(b"tree ") or not HEX40.match(first[5:].decode("ascii", "replace")):
        raise GitObjectError(f"commit {commit} names no tree")
    return first[5:].decode()


def blob_at(store: ObjectStore, tree: str, rel: str) -> str:
    """The blob name of `rel` in a tree; GitObjectError when it is not a file there."""
    parts = rel.split("/")
    for depth, part in enumerate(parts):
        kind, content = store.read(tree)
        if kind != b"tree":
            raise GitObjectError(f"{tree} is not a tree")
        mode, name = tree_entries(content).get(part, ("", ""))
        last = depth == len(parts) - 1
        if not name or (last and mode not in ("100644", "100755")) or (not last and mode != "40000"):
            raise GitObjectError(f"{rel} is not in the commit")
        tree = name
    return tree


def check_commit(git_dir: Path, commit: str, files: dict) -> str:
    """ "" when `commit`, its tree and each graded file (repository-relative
    path -> the bytes graded) are in the repository's objects, else why
    the commit is only claimed."""
    store = ObjectStore(git_dir)
    try:
        tree = commit_tree(store, commit)
        for rel in sorted(files):
            if blob_at(store, tree, rel) != object_id(b"blob", files[rel]):
                return f"the graded {rel} is not the commit's"
    except GitObjectError as exc:
        return str(exc)
    except (OSError, IndexError, struct.error, UnicodeDecodeError) as exc:
        return f"the repository's objects cannot be read ({exc.__class__.__name__})"
    return ""
