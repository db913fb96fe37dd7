"""Case descriptions: `POST /publish_notes?publication_id=N` (instructors).

`grader publish` sends, right after each problem's answers, one
{"name", "description"} per case: the op it exercises and the code that
computed it. The course's own mugrade client never calls this endpoint, so
the wire protocol is unchanged. With them, the server's reasons name the
case's op ("case 3: WRONG (divide_scalar: value: values differ beyond
tolerance ...)" in the client) and
the gradebook lists cases by name.

Notes of a publication are written once: sending the same notes again is
fine (a retry), different ones are refused, as publications never change.
"""

import json
import time

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import insert, select
from sqlalchemy.engine import Connection

from grader.server.store.db import publications
from grader.server.store.protocol import LRU
from grader.server.store.records import case_notes

from .refused import Refused

MAX_NAME, MAX_DESCRIPTION = 100, 1000
router = APIRouter(include_in_schema=False)
RECHECK_SECONDS = 5.0
_names = LRU(1024)  # (engine id, publication id) -> (tuple of names, time read)


def parse_notes(body: bytes) -> list:
    """[(name, description)] from the body, or Refused naming the bad entry."""
    try:
        raw = json.loads(body) if body else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        raw = None
    if not isinstance(raw, list) or not raw:
        raise Refused(400, 'notes: send a JSON list with one {"name": ..., "description": ...} per case')
    notes = []
    for i, item in enumerate(raw):
        name = item.get("name") if isinstance(item, dict) else None
        text = item.get("description", "") if isinstance(item, dict) else None
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
            raise Refused(400, f"notes[{i}].name: give 1-{MAX_NAME} characters")
        if not isinstance(text, str) or len(text) > MAX_DESCRIPTION:
            raise Refused(400, f"notes[{i}].description: give a string of at most {MAX_DESCRIPTION} characters")
        notes.append((name.strip(), text))
    return notes


def notes_job(publication_id: int, notes: list):
    """Write: the notes of a publication; returns an error text or None."""

    def job(conn: Connection):
        pub = conn.execute(select(publications.c.num_cases).where(publications.c.id == publication_id)).first()
        if pub is None:
            return f"no publication {publication_id}: publish the answers first"
        if pub.num_cases != len(notes):
            return f"publication {publication_id} has {pub.num_cases} cases, got {len(notes)} notes"
        old = conn.execute(
            select(case_notes.c.name, case_notes.c.description)
            .where(case_notes.c.publication_id == publication_id)
            .order_by(case_notes.c.test_case_index)
        ).all()
        if old:
            return (
                None
                if [tuple(r) for r in old] == notes
                else f"publication {publication_id} already has other notes; publish again to change them"
            )
        conn.execute(
            insert(case_notes),
            [
                {"publication_id": publication_id, "test_case_index": i, "name": n, "description": d}
                for i, (n, d) in enumerate(notes)
            ],
        )
        return None

    return job


@router.post("/publish_notes")
async def publish_notes(request: Request):
    svc, q = request.app.state.services, request.query_params
    user = await svc.authenticate(request, q.get("user_key"))
    if not user.is_instructor:
        raise Refused(403, f"only instructors can describe cases; '{user.name}' is a {user.role}")
    pid = _publication_id(q.get("publication_id"))
    notes = parse_notes(await request.body())
    error = await svc.writer.run(notes_job(pid, notes))
    if error:
        raise Refused(404 if error.startswith("no publication") else 409, error)
    return JSONResponse({"publication_id": pid, "num_notes": len(notes)})


def _publication_id(text) -> int:
    if not text or not (text.isascii() and text.isdigit()) or len(text) > 12:
        raise Refused(400, "query parameter 'publication_id' must be the id /publish answered")
    return int(text)


def _load_names(conn: Connection, publication_id: int) -> tuple:
    return tuple(
        r[0]
        for r in conn.execute(
            select(case_notes.c.name)
            .where(case_notes.c.publication_id == publication_id)
            .order_by(case_notes.c.test_case_index)
        ).all()
    )


async def named_reason(svc, publication_id: int, index: int, reason: str) -> str:
    """`reason` prefixed with the case's name, e.g. "divide_scalar: value: ...", when the
    publisher described the cases; else as it is. (Clients already print the case index.)"""
    key, t = (id(svc.engine), publication_id), time.monotonic()
    hit = _names.get(key)
    if hit is None or (not hit[0] and t - hit[1] > RECHECK_SECONDS):
        # Notes arrive just after the answers: a publication without them is looked
        # up again after a while, not on every wrong answer of a deadline rush.
        hit = (await svc.read(_load_names, publication_id), t)
        _names.put(key, hit)
    names = hit[0]
    return f"{names[index]}: {reason}" if index < len(names) else reason
