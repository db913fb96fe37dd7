"""Question slots a batch's submissions share, earliest submission first.

A batch grades several submissions at once, each in a process of its own.
With one question at a time per submission, two submissions on two cores
each take twice a single grade's time, so the first result comes late, and
at the end of a batch the last submission runs on one core while the other
idles. Instead every submission may run `width` questions at once, but a
question's worker runs only while holding one of `width` slots shared by
the whole batch, and a slot goes to the waiting submission that comes first
in the batch (its `rank`). The cores stay full, the first submission gets
both of them while it has questions to run, and its result comes about
when a single grade's would.

A question's sandbox is set up before its slot: a uid, a control group,
the sandbox's namespaces. That setup mostly waits on the kernel, so it goes
on beside the workers that hold the slots, and a set-up question is ready
when one comes free. Each submission sets up one question at a time
(`staged()`, a pass of its own), so a batch holds at most 2 x `width`
sandbox uids besides those being torn down. The pass goes to the question
that comes first in the submission's run order (`order`: the longest
first), whichever thread asks first, and the next question already waits
for it (`Slots.ahead`): the pass is handed on the moment a set-up question
takes its slot. While a submission's pass is held or asked for, later
submissions leave a free slot to it (a marker `wait-RANK-PID-staging`, for
STAGE_GRACE seconds a set-up at most): a set-up takes a fraction of a
question's run, while a later submission's question, its longest first,
would keep the slot for a whole run. Without that, the first submission of
a batch of two lost a core for a second or more whenever the second one
was set up first, and its result came at up to 1.9x a single grade's time.

A single grade runs its questions the same way, in slots of its own
process (`local`): `width` workers at once, one question more set up, and
no stage pass (`width + 1` questions set up at once at most).

The slots are `width` lock files in a folder of the batch's: a slot is held
by holding its file's flock, so a process that dies lets go of it at once.
A submission waiting for one says so with a lock file of its own
(`wait-RANK-...`, held while it waits), so that a later one leaves the free
slot to it; a waiting file nobody holds is left over from a dead process
and ignored. A waiter sleeps on a bell of its own (`bell-...`, a FIFO it
reads), and whoever lets a slot go rings every bell (so does a submission
whose set-ups are over, for a slot left free to them), so the slot is taken
within a fraction of a millisecond (looking every 5 ms instead left a core
idle about 5 ms a question); the waiter still looks now and then, for a
slot a dead process let go. Standard library only; the folder holds no
secret.
"""

from __future__ import annotations

import fcntl
import os
import select
import threading
import time
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path

POLL_SECONDS = 0.05  # between two looks at the slots while waiting, unless the bell rings first
STAGE_GRACE = 2.0  # seconds one set-up keeps a free slot from later submissions, at most
WAITING = "wait-"
STAGING = "-staging"  # the end of a submission's waiting marker while its stage pass is held or asked for
BELL = "bell-"


class StagePass:
    """One submission's stage pass, in the process grading it: held by one
    question at a time, and when it comes free it goes to the waiting
    question that comes first in the run order. While it is held or asked
    for, the submission holds its `marker` (a waiting marker: later
    submissions leave a free slot to it), dated when the pass was last
    taken."""

    def __init__(self, marker: Path | None = None):
        self._free = threading.Condition()
        self._held = False
        self._waiting: list[int] = []  # the orders of the questions waiting for it
        self._marker, self._fd = marker, None

    @contextmanager
    def taken(self, order: int):
        with self._free:
            self._waiting.append(order)
            try:
                self._mark()
                self._free.wait_for(lambda: not self._held and min(self._waiting) == order)
            except BaseException:
                self._waiting.remove(order)
                self._let_go()  # a wait cut short may have been the one the others gave way to
                raise
            self._waiting.remove(order)
            self._free.notify_all()
            self._held = True
            if self._fd is not None:
                os.utime(self._fd)  # this set-up's start: STAGE_GRACE counts from it
        try:
            yield
        finally:
            with self._free:
                self._held = False
                self._let_go()

    def _mark(self) -> None:
        if self._marker is None or self._fd is not None:
            return
        fd = _open(self._marker)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def _let_go(self) -> None:
        """Wake the waiters; the marker goes when nobody holds or asks for the
        pass, and the batch's waiters look again (a slot left free for this
        set-up is theirs now)."""
        self._free.notify_all()
        if self._fd is not None and not self._held and not self._waiting:
            self._marker.unlink(missing_ok=True)
            os.close(self._fd)
            self._fd = None
            ring(str(self._marker.parent))


_PASSES: dict[tuple[str, int], StagePass] = {}  # (folder, rank) -> its stage pass, in this process
_PASSES_LOCK = threading.Lock()


@dataclass(frozen=True)
class Slots:
    folder: str  # made by the batch (make); the same for all its submissions
    width: int  # questions running at once in the whole batch
    rank: int = 0  # this submission's place in the batch: lower goes first
    order: int = 0  # this question's place in its submission's run order: lower is set up first

    def for_rank(self, rank: int) -> Slots:
        return replace(self, rank=rank)

    def for_question(self, order: int) -> Slots:
        return replace(self, order=order)

    ahead = 2  # questions under way besides the running ones: one set up, the next waiting for the pass

    def stage_pass(self) -> StagePass:
        """This submission's stage pass (a submission is graded in one process)."""
        with _PASSES_LOCK:
            if (self.folder, self.rank) not in _PASSES:
                marker = Path(self.folder) / f"{WAITING}{self.rank:08d}-{os.getpid()}{STAGING}"
                _PASSES[(self.folder, self.rank)] = StagePass(marker)
            return _PASSES[(self.folder, self.rank)]

    def staged(self):
        """Held while one of this submission's questions is set up and waits for a slot."""
        return self.stage_pass().taken(self.order)

    @contextmanager
    def held(self):
        """Wait for a slot (submissions ranked before this one first), hold it inside the block."""
        marker = Path(self.folder) / f"{WAITING}{self.rank:08d}-{os.getpid()}-{threading.get_ident()}"
        slot = None
        with ExitStack() as waiting:
            bell = _Bell(self.folder)  # before the first look: a slot let go after it rings
            waiting.callback(bell.close)
            mine = _open(marker)
            waiting.callback(os.close, mine)
            waiting.callback(marker.unlink, missing_ok=True)
            fcntl.flock(mine, fcntl.LOCK_EX)
            # Opened once for the whole wait: a look is a few flock calls, and a listing when one is free.
            slots = []
            waiting.callback(lambda: [os.close(fd) for fd in slots if fd != slot])
            for k in range(self.width):
                slots.append(_open(Path(self.folder) / f"slot-{k}"))
            while slot is None:
                slot = _lock_one(slots)
                if slot is not None and self._someone_ahead():
                    fcntl.flock(slot, fcntl.LOCK_UN)  # theirs: earlier submissions first
                    slot = None
                    ring(self.folder, but=bell.name)
                if slot is None:
                    bell.wait(POLL_SECONDS)
        try:
            yield
        finally:
            os.close(slot)  # lets go of the flock
            ring(self.folder)

    def _someone_ahead(self) -> bool:
        """A live waiter ranked before this submission, or one setting a question up."""
        for name in os.listdir(self.folder):
            if not name.startswith(WAITING) or int(name[len(WAITING) :].split("-")[0]) >= self.rank:
                continue
            try:
                fd = os.open(Path(self.folder) / name, os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:  # it got its slot meanwhile
                continue
            try:
                if name.endswith(STAGING) and time.time() - os.fstat(fd).st_mtime > STAGE_GRACE:
                    continue  # a set-up this slow keeps no slot waiting
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # nobody holds it: left by a dead process
            except BlockingIOError:
                return True
            finally:
                os.close(fd)
        return False


@dataclass(frozen=True)
class LocalSlots:
    """A single grade's slots, in its own process: `width` workers at once.
    No stage pass: with one question more than `width` under way, at most
    `width + 1` are set up at once, and they all start at once."""

    width: int
    order: int = 0
    _running: threading.Semaphore = field(default=None, compare=False, repr=False)
    ahead = 1  # questions under way besides the running ones: one set up

    def __post_init__(self):
        if self._running is None:
            object.__setattr__(self, "_running", threading.BoundedSemaphore(self.width))

    def for_question(self, order: int) -> LocalSlots:
        return replace(self, order=order)

    def staged(self):
        return nullcontext()

    @contextmanager
    def held(self):
        with self._running:
            yield


def local(width: int) -> LocalSlots:
    """Slots for the questions of one grade in this process."""
    return LocalSlots(max(1, width))


def make(folder: Path, width: int) -> Slots:
    """The slots of a batch, in `folder` (made if missing, ours alone)."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return Slots(str(folder), max(1, width))


class _Bell:
    """A waiter's bell: a FIFO in the slots' folder that this thread reads."""

    def __init__(self, folder: str):
        self.name = f"{BELL}{os.getpid()}-{threading.get_ident()}"
        self.path = Path(folder) / self.name
        self.path.unlink(missing_ok=True)  # left by a dead process that had our pid and thread id
        os.mkfifo(self.path, 0o600)
        # Read and write: the FIFO then never reads as closed, whoever opens and closes it.
        self.fd = os.open(self.path, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)

    def wait(self, seconds: float) -> None:
        """Until it rings or `seconds` pass; the rings so far are taken."""
        select.select([self.fd], [], [], seconds)
        try:
            os.read(self.fd, 4096)
        except BlockingIOError:
            pass

    def close(self) -> None:
        self.path.unlink(missing_ok=True)
        os.close(self.fd)


def ring(folder: str, but: str = "") -> None:
    """Wake every waiter for a slot of the batch (but the bell named `but`);
    nothing once the batch has removed the folder (it was stopped)."""
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return
    for name in names:
        if not name.startswith(BELL) or name == but:
            continue
        try:  # no reader (its waiter died) or already rung: nothing to do
            fd = os.open(Path(folder) / name, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            os.write(fd, b".")
        except OSError:
            pass
        finally:
            os.close(fd)


def _lock_one(fds: list) -> int | None:
    """The first of the slot files' descriptors we could lock, None if all are held."""
    for fd in fds:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            continue
    return None


def _open(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
