"""Group commit: one writer thread owns every database write.

Why: SQLite allows one writer at a time, so request threads inserting their
own rows queue on its lock (measured: p99 650 ms at 1000 req/s). Here each
request hands the writer a small function and waits; the writer takes every
write queued so far, runs them in one transaction and commits once (one
fsync), then wakes exactly the requests of that group. While it commits, the
next group gathers by itself, so busy servers make bigger groups instead of
longer queues. A request is answered only after its group is committed, so
an acknowledged write is on disk.

A write is either a function of a connection, or an item for a bulk
function (`run_bulk`): the group's items for one bulk function go to it in a
single call, so the hot path (case results) costs one SELECT and one
multi-row INSERT per group instead of two statements per request.
"""

import asyncio
import concurrent.futures
import logging
import queue
import threading
import time
from typing import Callable, Optional

from sqlalchemy.engine import Connection, Engine

log = logging.getLogger("grader.server.store.writer")
_STOP = object()


class WriterStopped(RuntimeError):
    """The writer is shut down; the write was not made."""


class Writer:
    def __init__(self, engine: Engine, max_batch: int = 512, guard=None):
        self._engine = engine
        self._guard = guard  # db.StorageGuard: no acknowledgement for a write to a lost file
        self._max_batch = max_batch
        self._queue: "queue.SimpleQueue" = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="grader-writer", daemon=True)
        self._stopped = False
        self._conn: Optional[Connection] = None  # the writer's own, so readers can never starve it
        self.batches = 0  # counters for the benchmark and tests
        self.writes = 0
        self.slowest = 0.0  # longest group commit, seconds

    def start(self):
        self._thread.start()

    def stop(self, timeout: float = 10.0):
        """Finish every queued write, then stop the thread."""
        if not self._stopped:
            self._stopped = True
            self._queue.put(_STOP)
            self._thread.join(timeout)
            log.info(
                "writer stopped: %d writes in %d group commits, slowest %.0f ms",
                self.writes,
                self.batches,
                1000 * self.slowest,
            )

    def submit(self, fn: Callable[[Connection], object], bulk: Optional[Callable] = None) -> concurrent.futures.Future:
        """Queue `fn(conn)`, or with `bulk`, the item `fn` for `bulk(conn, items) -> results`."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        if self._stopped:
            future.set_exception(WriterStopped("server is shutting down"))
        else:
            self._queue.put((bulk, fn, future))
        return future

    async def run(self, fn: Callable[[Connection], object]):
        """Run `fn(conn)` in the next group; return its result once committed."""
        return await asyncio.wrap_future(self.submit(fn))

    async def run_bulk(self, bulk: Callable, item):
        """Hand `item` to `bulk(conn, items)` in the next group; return its result once committed."""
        return await asyncio.wrap_future(self.submit(item, bulk))

    def _loop(self):
        try:
            while True:
                batch, stop = self._next_batch()
                if batch:
                    self._commit(batch)
                if stop:
                    return
        finally:
            self._drop_connection()

    def _connection(self) -> Connection:
        if self._conn is None:
            self._conn = self._engine.connect()
        return self._conn

    def _drop_connection(self):
        """Close the connection after a failure (it may be broken); the next group opens another."""
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # already broken: nothing left to release
                pass
            self._conn = None

    def _next_batch(self):
        first = self._queue.get()
        if first is _STOP:
            return [], True
        batch = [first]
        while len(batch) < self._max_batch:
            try:
                job = self._queue.get_nowait()
            except queue.Empty:
                break
            if job is _STOP:
                return _claim(batch), True
            batch.append(job)
        return _claim(batch), False

    def _check(self):
        if self._guard is not None:
            self._guard.check()

    def _commit(self, batch):
        t0 = time.perf_counter()
        try:
            self._check()
        except Exception as e:  # nothing is written while the database is lost
            for job in batch:
                job[2].set_exception(e)
            return
        try:
            conn = self._connection()
            with conn.begin():
                results = _run_group(conn, batch)
            self._check()  # the file vanished during the commit: the client must not count on it
        except Exception as e:
            if self._guard is not None and self._guard.problem:
                for job in batch:
                    job[2].set_exception(e)
                return
            # one bad write must not sink its group: retry each alone
            log.warning("group of %d writes failed (%s); retrying them one by one", len(batch), e.__class__.__name__)
            self._drop_connection()
            for job in batch:
                self._commit_one(job)
            return
        self.batches += 1
        self.writes += len(batch)
        self.slowest = max(self.slowest, time.perf_counter() - t0)
        for (_, _, future), result in zip(batch, results):
            future.set_result(result)

    def _commit_one(self, job):
        future = job[2]
        try:
            conn = self._connection()
            with conn.begin():
                result = _run_group(conn, [job])[0]
        except Exception as e:  # reported to the waiting request, which answers 4xx/503
            self._drop_connection()
            future.set_exception(e)
        else:
            self.batches += 1
            self.writes += 1
            future.set_result(result)


def _claim(batch) -> list:
    """Drop writes whose request gave up (its future was cancelled) and mark
    the rest running, so that no later cancel can make `set_result` fail."""
    return [job for job in batch if job[2].set_running_or_notify_cancel()]


def _run_group(conn: Connection, batch) -> list:
    """Results in batch order: plain writes first, in order, then each bulk function once.

    Requests never depend on a write of the same group (a client needs the
    answer of /submit before it can send /submit_test), so this reordering is safe.
    """
    results, groups = [None] * len(batch), {}
    for i, (bulk, fn, _) in enumerate(batch):
        if bulk is None:
            results[i] = fn(conn)
        else:
            groups.setdefault(bulk, []).append(i)
    for bulk, positions in groups.items():
        for i, result in zip(positions, bulk(conn, [batch[i][1] for i in positions])):
            results[i] = result
    return results
