"""grade-batch on a Dask distributed cluster: one task per submission.

Each task runs the same pure function as the local pool (`grade_one`) on a
worker, which grades in its own sandbox there, into a private temporary
folder; the task returns the reports as text and this process, the only
writer, puts them into OUTDIR/<name>/ and updates the gradebook as each one
finishes. So OUTDIR needs to exist on this machine only, and a task that
ran twice (its first worker died after grading) is still written once.

Dask's scheduler reschedules the tasks of a worker that dies on the other
workers; a task that keeps killing its workers ends as KilledWorker and is
reported "not graded" (no results.json, so the next run retries it). The
submissions must be readable at the same path on every worker (a shared
filesystem, or one machine), and every worker must run the same grader
checkout: each task checks both and refuses with the reason otherwise. It
also refuses where the sandbox tier lets student code reach the network and
the cluster has no TLS, since any task sent to a Dask port runs.
"""

import socket
import tempfile
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path

from grader import sandbox
from grader.core import blas, settings
from grader.core.files import write_atomic
from grader.grading.batch.jobs import Done
from grader.grading.report.writing import REPORT_FILES, RESULTS
from grader.grading.run import expected

OFFLINE_TIERS = {"bwrap", "unshare"}  # sandbox tiers whose student code has no network
CONNECT_SECONDS = 10
RETRIES = 2  # a task that raised (not a lost worker: that one is rescheduled anyway)
PATIENCE = settings.NO_WORKER_TIMEOUT.default  # seconds without any worker before the waiting tasks are given up
POLL_SECONDS = 0.2


class ClusterError(RuntimeError):
    """The cluster cannot be used; the message says what to start or install."""


@dataclass(frozen=True)
class Graded:
    done: Done
    files: tuple  # (report file name, text) pairs


def grade_remote(job, grade_fn, grader_key: str) -> Graded:
    """Runs on a Dask worker: grade_fn(job) into a temporary folder there,
    the reports returned as text."""
    blas.use_here()  # however the operator started this worker
    where = socket.gethostname()
    if expected.cache_key(job.config.assignment) != grader_key:
        raise ClusterError(
            f"worker on {where} runs a different grader (reference, cases, worker or "
            "numpy differ from the client's): install the same checkout on every worker"
        )
    if not Path(job.submission).exists():
        raise ClusterError(
            f"{job.submission}: not visible on the worker on {where}; put the "
            "submissions on a filesystem every worker mounts at the same path"
        )
    worker = _this_worker()
    problem = network_problem(job.config.tier or sandbox.probe(), worker.address if worker else "")
    if problem:
        raise ClusterError(f"worker on {where}: {problem}")
    # In the worker's own scratch folder, which Dask clears even after a SIGKILL.
    scratch = worker.local_directory if worker else None
    with tempfile.TemporaryDirectory(prefix="grade-task-", dir=scratch) as tmp:
        out = Path(tmp) / "out"
        done = grade_fn(replace(job, out_dir=out))
        files = tuple(
            (name, (out / name).read_text(encoding="utf-8")) for name in REPORT_FILES if (out / name).is_file()
        )
    return Graded(done, files)


def _this_worker():
    """The Dask worker running this task (None when not in a worker)."""
    from distributed import get_worker

    try:
        return get_worker()
    except ValueError:
        return None


def network_problem(tier: str, worker_address: str) -> str:
    """Why grading here would be unsafe, or "". Dask runs any pickled task
    sent to its ports; without TLS, student code in a sandbox tier that can
    reach the network could send one and run as the grader (pure)."""
    if tier in OFFLINE_TIERS or worker_address.startswith("tls://"):
        return ""
    return (
        f"the sandbox tier here ({tier}) lets student code reach the network, and this Dask "
        f"cluster ({worker_address or 'no address'}) has no TLS, so a submission could send tasks "
        "to it: start the cluster with TLS (see docs/operator/scale-out.md) or on machines where bubblewrap works"
    )


TLS_ENV = (
    "DASK_DISTRIBUTED__COMM__TLS__CA_FILE, DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT and "
    "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY"
)


def connect(address: str, timeout: float | None = None):
    """A Dask client for the scheduler at `address`, or ClusterError."""
    timeout = CONNECT_SECONDS if timeout is None else timeout
    try:
        import dask.config
        from distributed import Client  # optional extra: only --cluster needs it
    except ImportError:
        raise ClusterError("--cluster needs the distributed package: pip install -e '.[cluster]'") from None
    if address.startswith("tls://") and not (
        dask.config.get("distributed.comm.tls.ca-file", None)
        and dask.config.get("distributed.comm.tls.client.cert", None)
    ):
        raise ClusterError(
            f"--cluster {address}: a TLS scheduler needs this client's certificate: set {TLS_ENV} (PEM files)"
        )
    try:
        return Client(address, timeout=timeout, set_as_default=False)
    except Exception as exc:  # refused, timed out, TLS handshake, bad address: all mean "not usable"
        raise ClusterError(
            f"--cluster {address}: no Dask scheduler answered ({type(exc).__name__}: "
            f"{exc}); start one with `dask scheduler` and pass its address"
        ) from None


def save(graded: Graded, out_dir: Path) -> None:
    """The returned reports into out_dir, each atomically; results.json last,
    since its presence is what marks the submission graded."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files = dict(graded.files)
    for name in sorted(files, key=lambda n: n == RESULTS):
        if name in REPORT_FILES:
            write_atomic(out_dir / name, files[name])


def run_jobs(client, jobs: list, grade_fn, on_done, patience: float = PATIENCE) -> list:
    """One task per job on the client's cluster; results saved and passed to
    on_done(Done) in the order they finish. Jobs still waiting when the
    cluster has had no worker for `patience` seconds end "not graded" (the
    next run grades them). Closes the client."""
    from distributed import as_completed  # optional extra, present once connect() worked

    key = expected.cache_key(jobs[0].config.assignment) if jobs else ""  # one assignment per batch
    batch_id = uuid.uuid4().hex[:12]  # two batches with the same names never share a task
    results = []
    with client:
        futures = {
            client.submit(
                grade_remote, job, grade_fn, key, key=f"grade-{job.name}-{batch_id}", pure=False, retries=RETRIES
            ): job
            for job in jobs
        }
        for future in _finished(as_completed(futures, loop=client.loop), client, patience):
            done = _collect(future, futures.pop(future))
            results.append(done)
            on_done(done)
        for future, job in futures.items():  # given up: no worker left
            future.cancel()
            done = Done(
                job.name,
                0.0,
                False,
                0.0,
                f"not graded: the cluster had no worker for {patience:g} s; start workers and run grade-batch again",
                graded=False,
            )
            results.append(done)
            on_done(done)
    return results


def _collect(future, job) -> Done:
    try:
        graded = future.result()
        save(graded, Path(job.out_dir))
        return graded.done
    except Exception as exc:  # KilledWorker, a refused task, a lost scheduler
        return Done(job.name, 0.0, False, 0.0, f"not graded: {type(exc).__name__}: {exc}", graded=False)
    finally:
        future.release()


def _finished(pending, client, patience: float):
    """Futures as they finish; stops early once the scheduler has reported
    no worker for `patience` seconds (tasks would wait for one forever)."""
    idle_since = None
    while not pending.is_empty():
        ready = pending.next_batch(block=False)
        if ready:
            yield from ready
            continue
        if client.scheduler_info().get("workers"):
            idle_since = None
        elif idle_since is None:
            idle_since = time.monotonic()
        elif time.monotonic() - idle_since > patience:
            return
        time.sleep(POLL_SECONDS)
