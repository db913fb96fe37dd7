"""The five attacks of the second black-box round, for `attack.py`: each one
client (address 127.0.0.2) doing one thing the server once could not bear.

- `header`: connections sending a 40 MB request header as fast as they can;
- `me`: a student with 40 stored answers of ~1 MB reloading /me in 4 tabs, each
  as soon as its page is there, at most 10 times a second (a browser, not a flood
  of bare requests: a flood from one address is its own attack, not bounded here);
- `big`: one key sending 8 MB answers on two connections, about one a second each;
- `signin`: one key signing in on 4 connections, 200 times a second in all
  (the flood seen: 130 a second);
- `utf8`: one key storing answers of 4-byte UTF-8 characters, past its quota.

`setup` (stored answers, a session) runs before the measured load starts.
Every request asks the server to close the connection, so each is read to its end.
"""

import asyncio
import json
import random
import time
from urllib.parse import urlencode

SOURCE = ("127.0.0.2", 0)
# What the bench publishes for these attacks (benchmarks/server.py): a problem of
# large arrays and one of long strings, so that answers of ~1 MB are within their limits.
BIG = {"problem": "big", "cases": 4, "elements": 50_000}
TEXT = {"problem": "text", "cases": 4, "chars": 262_000}
ME_ANSWERS, ME_TABS, TAB_RELOAD_S = 40, 4, 0.1
SIGNIN_SLOTS, SIGNIN_EVERY_S = 4, 0.02
SETTLE_S = 3.0


def published(kind: dict) -> list:
    if kind is BIG:
        return [{"_encoded_type": "np.ndarray", "data": [0.0] * BIG["elements"]}] * BIG["cases"]
    return ["a" * TEXT["chars"]] * TEXT["cases"]


async def request(host, port, method, target, key="", body=b"", headers=()) -> tuple:
    """(status, head, body) of one request on its own connection; (0, "", b"") when dropped."""
    lines = [
        f"{method} {target} HTTP/1.1",
        f"Host: {host}:{port}",
        "Connection: close",
        f"Content-Length: {len(body)}",
        *headers,
    ] + ([f"Authorization: Bearer {key}"] if key else [])
    try:
        reader, writer = await asyncio.open_connection(host, port, local_addr=SOURCE)
    except OSError:
        return 0, "", b""
    try:
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 30)
    except (OSError, asyncio.TimeoutError):
        return 0, "", b""
    finally:
        writer.close()
    head, _, rest = answer.partition(b"\r\n\r\n")
    status = int(head[9:12]) if head[9:12].isdigit() else 0
    return status, head.decode("latin-1"), rest


async def start(host, port, key, problem) -> int:
    status, _, body = await request(host, port, "POST", f"/submit?assignment=bench&problem={problem}", key)
    if status != 200:
        raise RuntimeError(f"attacker: /submit of {problem} answered {status}: {body[:200]!r}")
    return json.loads(body)["submission_id"]


async def answer(host, port, key, sid, index, body: bytes) -> int:
    return (await request(host, port, "POST", f"/submit_test?submission_id={sid}&test_case_index={index}", key, body))[
        0
    ]


def big_answer(rng) -> bytes:
    """A wrong answer to a BIG case: ~1 MB of JSON, under the 1 MB the server keeps."""
    data = ",".join("%.15f" % rng.random() for _ in range(BIG["elements"]))
    return ('{"_encoded_type": "np.ndarray", "data": [' + data + "]}").encode()


UTF8_TEXT = ("\U0001f600" * (TEXT["chars"] - 1)).encode("utf-8")  # 4 bytes a character


def utf8_answer(n: int) -> bytes:
    """The n-th answer of 4-byte characters (each a different value): ~1 MB, a quarter as many characters."""
    return b'"' + str(n % 10).encode() + UTF8_TEXT + b'"'


async def sign_in(host, port, key) -> tuple:
    form = urlencode({"key": key}).encode()
    status, head, _ = await request(
        host, port, "POST", "/login", body=form, headers=("Content-Type: application/x-www-form-urlencoded",)
    )
    cookie = next(
        (
            line.split(":", 1)[1].split(";")[0].strip()
            for line in head.split("\r\n")
            if line.lower().startswith("set-cookie:")
        ),
        "",
    )
    return status, cookie


async def setup(kinds, host, port, key) -> dict:
    """What the attacks need before the measured load starts: for `me`, stored answers and a session."""
    state = {}
    if "me" in kinds:
        rng, statuses = random.Random(0), []
        for _ in range(ME_ANSWERS // BIG["cases"]):
            sid = await start(host, port, key, BIG["problem"])
            for i in range(BIG["cases"]):
                statuses.append(await answer(host, port, key, sid, i, big_answer(rng)))
        if statuses.count(200) != ME_ANSWERS:
            raise RuntimeError(f"attacker: storing the /me answers answered {sorted(set(statuses))}")
        status, state["cookie"] = await sign_in(host, port, key)
        if status != 303 or not state["cookie"]:
            raise RuntimeError(f"attacker: signing in answered {status}")
        # The answers were stored earlier in the week, not during the rush: let the server copy
        # them out of its write-ahead log before the measured load starts.
        await asyncio.sleep(SETTLE_S)
    return state


async def huge_headers(host, port, stop_at, counts, slots=4):
    piece = b"a" * 65536

    async def one():
        while time.monotonic() < stop_at:
            try:
                reader, writer = await asyncio.open_connection(host, port, local_addr=SOURCE)
                writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Key: ")
                for _ in range(40 * 16):  # 40 MB, unless the server closes first
                    writer.write(piece)
                    await writer.drain()
                writer.close()
            except OSError:
                pass
            counts["header"] += 1
            await asyncio.sleep(0.02)

    await asyncio.gather(*(one() for _ in range(slots)))


async def me_storm(host, port, stop_at, counts, state):
    async def tab():
        while time.monotonic() < stop_at:
            t0 = time.monotonic()
            status, _, _ = await request(host, port, "GET", "/me", headers=(f"Cookie: {state['cookie']}",))
            name = "me" if status == 200 else f"me_{status}"
            counts[name] = counts.get(name, 0) + 1
            await asyncio.sleep(max(0.0, TAB_RELOAD_S - (time.monotonic() - t0)))

    await asyncio.gather(*(tab() for _ in range(ME_TABS)))


async def big_answers(host, port, key, stop_at, counts):
    body = b"[" + b"1.0," * (2 * 2**20 - 1) + b"1.0]"  # 8 MB

    async def one():
        sid = await start(host, port, key, "load")
        while time.monotonic() < stop_at:
            t0 = time.monotonic()
            status = await answer(host, port, key, sid, 0, body)
            counts[f"big_{status}"] = counts.get(f"big_{status}", 0) + 1
            await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - t0)))

    await asyncio.gather(one(), one())


async def sign_in_flood(host, port, key, stop_at, counts):
    async def one():
        while time.monotonic() < stop_at:
            t0 = time.monotonic()
            status, _ = await sign_in(host, port, key)
            counts[f"signin_{status}"] = counts.get(f"signin_{status}", 0) + 1
            await asyncio.sleep(max(0.0, SIGNIN_EVERY_S - (time.monotonic() - t0)))

    await asyncio.gather(*(one() for _ in range(SIGNIN_SLOTS)))


async def utf8_quota(host, port, key, stop_at, counts):
    """Store answers past the quota; once /submit is refused, keep sending other values
    for the last submission's cases (each read and judged before it is refused)."""

    async def one():
        sid, n = None, 0
        while time.monotonic() < stop_at:
            status, _, body = await request(
                host, port, "POST", f"/submit?assignment=bench&problem={TEXT['problem']}", key
            )
            counts[f"utf8_submit_{status}"] = counts.get(f"utf8_submit_{status}", 0) + 1
            sid = json.loads(body)["submission_id"] if status == 200 else sid
            for i in range(TEXT["cases"] if sid else 0):
                n += 1
                status = await answer(host, port, key, sid, i, utf8_answer(n))
                counts[f"utf8_{status}"] = counts.get(f"utf8_{status}", 0) + 1
                await asyncio.sleep(0.1)
            await asyncio.sleep(0.1)

    await asyncio.gather(one(), one())


def runs(host, port, key, stop_at, counts, state) -> dict:
    return {
        "header": lambda: huge_headers(host, port, stop_at, counts),
        "me": lambda: me_storm(host, port, stop_at, counts, state),
        "big": lambda: big_answers(host, port, key, stop_at, counts),
        "signin": lambda: sign_in_flood(host, port, key, stop_at, counts),
        "utf8": lambda: utf8_quota(host, port, key, stop_at, counts),
    }
