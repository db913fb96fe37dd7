"""Server-rendered pages: log-in with a key, /me for students, /gradebook (with a
page per student and CSV) for instructors.

The session cookie is HttpOnly (scripts cannot read it), SameSite=Strict (no
cross-site request carries it) and Secure when served over HTTPS; the session
itself lives in the database, so signing out ends it. POSTs to /login and
/logout must come from this server's own pages (`_same_origin`): otherwise a
hostile page could sign a visitor in as the attacker (login CSRF).
"""

import asyncio
from typing import Optional
from urllib.parse import parse_qs, urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from grader.server.accounts import users
from grader.server.gradebook import details, freshness, load, policy, scores
from grader.server.gradebook.timing import changes, clock

from . import casenotes, charts
from .connections import from_trusted_proxy
from .limits import read_body
from .refused import Refused
from .templates import SCRIPT, render

router = APIRouter(include_in_schema=False)
CHANGES_SHOWN = 50  # the newest changes to deadlines, extensions, late policy and verdicts a page lists
COOKIE = "grader_session"
HEADERS = {
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
}
# The gradebook's sorting and search: a script from this server only, never inline.
SCRIPT_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; form-action 'self'"


def _page(name: str, status: int = 200, csp: Optional[str] = None, **context) -> HTMLResponse:
    headers = dict(HEADERS, **({"Content-Security-Policy": csp} if csp else {}))
    return HTMLResponse(render(name, **context), status_code=status, headers=headers)


async def _session_user(request: Request):
    """The user of the session cookie, else None; a session's page loads are paced
    (ServerConfig.pages_per_second), checked before the database is asked about it."""
    svc, token = request.app.state.services, request.cookies.get(COOKIE, "")
    if not token:
        return None
    wait = svc.pages_by_session.retry_after(token[:100])
    if wait:
        raise Refused(429, f"too many page loads: try again in {wait} s", {"Retry-After": str(wait)})
    return await svc.read(users.session_user, token)


def _same_origin(request: Request):
    """Refuse a POST that a browser sent from another site (Fetch metadata, then Origin, then Referer).

    Scripts that send none of these headers are let through: CSRF needs a browser.
    """
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        raise Refused(403, "cross-site request refused: sign in and out from this server's own pages")
    source = request.headers.get("origin") or request.headers.get("referer")
    # Behind a reverse proxy the Host may be the proxy's upstream: the proxy's
    # word for the host counts too, from a declared proxy only (--trusted-proxy).
    hosts = {request.headers.get("host", "")}
    if from_trusted_proxy(request.scope, request.app.state.services.config.trusted_proxies):
        hosts.add(request.headers.get("x-forwarded-host", ""))
    hosts -= {""}
    if source is not None and urlsplit(source).netloc not in hosts:
        raise Refused(403, "cross-site request refused: sign in and out from this server's own pages")


def _form_key(body: bytes) -> str:
    try:
        form = parse_qs(body.decode("utf-8", "replace"), max_num_fields=10)
    except ValueError:
        raise Refused(400, "sign-in form: too many fields; send only 'key'") from None
    return (form.get("key") or [""])[0].strip()


def _home(user) -> str:
    return "/gradebook" if user.is_staff else "/me"


@router.get("/")
async def index(request: Request):
    user = await _session_user(request)
    return RedirectResponse(_home(user) if user else "/login", status_code=303)


@router.get("/login")
async def login_form(request: Request):
    return _page("login", title="Sign in")


def _too_many_sign_ins(wait: int, whose: str) -> HTMLResponse:
    response = _page(
        "login", status=429, title="Sign in", error=f"Too many sign-ins from {whose}: try again in {wait} s."
    )
    response.headers["Retry-After"] = str(wait)
    return response


@router.post("/login")
async def login(request: Request):
    svc = request.app.state.services
    _same_origin(request)
    wait = svc.login_by_address.retry_after(request.client.host if request.client else "")
    if wait:  # before the form is read: guessing keys costs the server nothing more
        return _too_many_sign_ins(wait, "this address")
    # A small bound on the form, and its parsing off the event loop: an 8 MB
    # form once stalled every request for half a second.
    key = await run_in_threadpool(_form_key, await read_body(request, svc.config.max_form_bytes))
    user = await svc.user_for_key(key) if key else None
    if user is None:
        return _page("login", status=401, title="Sign in", error="Unknown key: check the key your instructor gave you.")
    wait = await svc.login_limiter.retry_after(-user.id)
    if wait:
        return _too_many_sign_ins(wait, "this key")
    token = await svc.write(users.open_session, user.id, svc.config.session_hours, svc.config.max_sessions_per_key)
    response = RedirectResponse(_home(user), status_code=303)
    response.set_cookie(
        COOKIE,
        token,
        max_age=int(svc.config.session_hours * 3600),
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )
    return response


@router.post("/logout")
async def logout(request: Request):
    _same_origin(request)
    token = request.cookies.get(COOKIE)
    if token:
        await request.app.state.services.write(users.close_session, token)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response


@router.get("/me")
async def me(request: Request):
    svc = request.app.state.services
    user = await _session_user(request)
    if user is None:
        return RedirectResponse("/login", status_code=303)
    html = await _results_page(svc, "me", user, user.name, title="My results")
    return HTMLResponse(html, headers=HEADERS)


async def _results_page(svc, template: str, user, name: str, **context) -> Optional[str]:
    """The rendered results page of student `name` as `user` sees it, reused while
    `freshness.student_version` is unchanged (the cache is per process: each process
    checks the database's version on every load, so none serves a stale page).
    None: no such student (not cached)."""
    key = (template, user.id, user.name, user.role, name)
    version = await svc.read(freshness.student_version, name)  # before the data: never older than it
    hit = svc.pages.get(key)
    if hit is not None and hit[0] == version:
        return hit[1]
    # Tabs opened together miss together: they share one rendering of this version
    # (four renderings at once once stalled other students for ~100 ms).
    pending = svc.rendering.get((key, version))
    if pending is None:
        pending = asyncio.ensure_future(_render_results(svc, template, user, name, key, version, context))
        svc.rendering[(key, version)] = pending
        pending.add_done_callback(lambda _: svc.rendering.pop((key, version), None))
    return await asyncio.shield(pending)  # a tab that gives up does not cancel the others' page


async def _render_results(svc, template: str, user, name: str, key, version, context: dict) -> Optional[str]:
    book, subs, timing = await _one_student_judged(svc, name)
    if template == "student" and not subs and not any(r.user_id for r in book.rows):
        return None
    html = await run_in_threadpool(render, template, user=user, **context, **_results(book, subs), **timing)
    svc.pages.put(key, (version, html))
    return html


def _one_student(conn, name: str):
    attempts = load.attempts(conn, name, policy.advisory_cases(conn))  # read once, for the scores and the details
    timing = {"zone": clock.zone(conn), "changes": changes.listing(conn, name, CHANGES_SHOWN)}
    return scores.build(conn, name, attempts), details.submissions(conn, name, attempts), timing


async def _one_student_judged(svc, name: str):
    """(gradebook, submissions) of one student, after storing the reasons of cases answered
    before reasons were kept: each is judged once, on the first page that shows it."""
    judged = await svc.read(details.unstored_reasons, name)
    if judged:
        await svc.writer.run(details.store_reasons_job(judged))
    return await svc.read(_one_student, name)


def _results(book, subs) -> dict:
    row = book.rows[0] if book.rows else None
    return {
        "cells": list(zip(book.questions, row.cells)) if row else [],
        "row": row,
        "total": row.total if row else 0.0,
        "subs": subs,
    }


async def _instructor(request: Request, key: Optional[str] = None):
    """The instructor or TA of the session cookie (or of a key, for scripts), else a refusal."""
    svc = request.app.state.services
    user = await _session_user(request)
    if user is None and (key or request.headers.get("authorization")):
        user = await svc.authenticate(request, key)
    if user is None:
        return None
    if not user.is_staff:
        raise Refused(403, "only instructors and TAs can read the gradebook; students see their results at /me")
    return user


async def _instructor_page(request: Request):
    """(user, None) for a signed-in instructor, else (None, the response to send)."""
    try:
        user = await _instructor(request)
    except Refused as e:
        user = None if e.status == 429 else await _session_user(request)
        return None, _page("forbidden", status=e.status, title="Forbidden", message=e.text, user=user)
    if user is None:
        return None, RedirectResponse("/login", status_code=303)
    return user, None


@router.get("/gradebook")
async def gradebook_page(request: Request):
    user, refusal = await _instructor_page(request)
    if refusal:
        return refusal
    book, timing = await request.app.state.services.read(_class_book)
    labels = scores.BINS + ("none",)  # the last bar: students who never submitted
    histograms = [
        charts.histogram(labels, st.histogram, f"{q.label}: students per score")
        for q, st in zip(book.questions, book.stats)
    ]
    timelines = [
        charts.timeline(times, deadline, f"{name}: server submissions over time")
        for name, deadline, times in book.times
    ]
    return _page(
        "gradebook",
        title="Gradebook",
        user=user,
        book=book,
        histograms=histograms,
        timelines=timelines,
        script=True,
        csp=SCRIPT_CSP,
        **timing,
    )


def _class_book(conn):
    return scores.build(conn), {"zone": clock.zone(conn), "changes": changes.listing(conn, None, CHANGES_SHOWN)}


@router.get("/gradebook/student")
async def student_page(request: Request, name: str = ""):
    user, refusal = await _instructor_page(request)
    if refusal:
        return refusal
    html = await _results_page(request.app.state.services, "student", user, name, title=f"Student: {name}")
    if html is None:
        return _page(
            "forbidden",
            status=404,
            title="Not found",
            user=user,
            message=f"no student named {name!r}: pick one in the gradebook",
        )
    return HTMLResponse(html, headers=HEADERS)


@router.get("/gradebook.csv")
async def gradebook_csv(request: Request, user_key: Optional[str] = None, full: str = ""):
    user = await _instructor(request, user_key)
    if user is None:
        raise Refused(401, "sign in at /login or pass an instructor key")
    book = await request.app.state.services.read(scores.build)
    return Response(
        scores.to_csv(book, full=full not in ("", "0")),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="grades.csv"', **HEADERS},
    )


@router.get("/static/gradebook.js")
async def gradebook_script():
    return Response(
        SCRIPT,
        media_type="text/javascript; charset=utf-8",
        headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
    )


router.include_router(casenotes.router)
