"""Group commit: concurrent writes share transactions, and one bad write fails alone."""

import concurrent.futures
import threading

from sqlalchemy import Column, Integer, MetaData, Table, create_engine, func, insert, select, text

from grader.server.store.writer import Writer, WriterStopped

meta = MetaData()
rows = Table("rows", meta, Column("n", Integer, primary_key=True))


def make(tmp_path):
    engine = create_engine(f"sqlite:///{tmp_path / 'w.db'}")
    meta.create_all(engine)
    return engine


def count(engine):
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(rows)).scalar()


def test_concurrent_writes_are_grouped_and_all_committed(tmp_path):
    engine = make(tmp_path)
    writer = Writer(engine, max_batch=64)
    gate = threading.Event()

    def slow_first(conn):  # holds the writer busy so the other writes pile up
        gate.wait(5)
        conn.execute(insert(rows).values(n=0))

    writer.start()
    first = writer.submit(slow_first)
    futures = [writer.submit(lambda conn, i=i: conn.execute(insert(rows).values(n=i)).rowcount) for i in range(1, 201)]
    gate.set()
    assert [f.result(10) for f in futures] == [1] * 200
    first.result(10)
    writer.stop()
    assert count(engine) == 201
    assert writer.writes == 201 and writer.batches <= 5  # 1 + ceil(200 / 64)


def test_a_failing_write_fails_alone(tmp_path):
    engine = make(tmp_path)
    writer = Writer(engine)
    gate = threading.Event()
    writer.start()
    blocker = writer.submit(lambda conn: gate.wait(5))
    good = [writer.submit(lambda conn, i=i: conn.execute(insert(rows).values(n=i))) for i in (1, 2)]
    bad = writer.submit(lambda conn: conn.execute(text("insert into nowhere values (1)")))
    more = writer.submit(lambda conn: conn.execute(insert(rows).values(n=3)))
    gate.set()
    for f in good + [more, blocker]:
        f.result(10)
    assert isinstance(bad.exception(10), Exception)
    writer.stop()
    assert count(engine) == 3


def test_stopped_writer_refuses_and_flushes_queue(tmp_path):
    engine = make(tmp_path)
    writer = Writer(engine)
    writer.start()
    pending = [writer.submit(lambda conn, i=i: conn.execute(insert(rows).values(n=i))) for i in range(50)]
    writer.stop()
    concurrent.futures.wait(pending, timeout=10)
    assert all(f.done() and f.exception() is None for f in pending)
    assert count(engine) == 50
    assert isinstance(writer.submit(lambda conn: None).exception(1), WriterStopped)


def test_bulk_items_of_a_group_go_to_one_call(tmp_path):
    engine = make(tmp_path)
    writer = Writer(engine)
    gate, calls = threading.Event(), []

    def bulk(conn, items):
        calls.append(list(items))
        conn.execute(insert(rows), [{"n": i} for i in items])
        return [i * 10 for i in items]

    writer.start()
    blocker = writer.submit(lambda conn: gate.wait(5))
    futures = [writer.submit(i, bulk) for i in range(1, 6)]
    gate.set()
    assert [f.result(10) for f in futures] == [10, 20, 30, 40, 50]
    blocker.result(10)
    writer.stop()
    assert calls == [[1, 2, 3, 4, 5]] and count(engine) == 5


def test_cancelled_write_is_skipped_and_the_writer_survives(tmp_path):
    engine = make(tmp_path)
    writer = Writer(engine)
    gate = threading.Event()
    writer.start()
    blocker = writer.submit(lambda conn: gate.wait(5))
    dropped = writer.submit(lambda conn: conn.execute(insert(rows).values(n=1)))
    assert dropped.cancel()  # e.g. the request's task was cancelled while queued
    kept = writer.submit(lambda conn: conn.execute(insert(rows).values(n=2)))
    gate.set()
    kept.result(10)
    blocker.result(10)
    assert not kept.cancel()  # running or done: a late cancel cannot break set_result
    later = writer.submit(lambda conn: conn.execute(insert(rows).values(n=3)))
    later.result(10)
    writer.stop()
    with engine.connect() as conn:
        assert sorted(r[0] for r in conn.execute(select(rows.c.n))) == [2, 3]
