"""The numeric environment every process the grader starts gets.

One BLAS thread: on these machines one OpenBLAS thread is about 5x faster
than the default, and concurrent workers must not oversubscribe the cores.

No transparent huge pages for numpy's large arrays: numpy asks the kernel
for them on arrays of 4 MB and more, and where the kernel compacts memory
to find them on the spot (THP "defrag" set to madvise, the usual default)
every fault waits for it. Measured here: turning MNIST's training images
into float32 (188 MB) took 0.15-0.30 s with them and 0.07 s without, in
every worker that reads the training set and in the course's own tests.
"""

import os
import sys

ONE_THREAD = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMPY_MADVISE_HUGEPAGE": "0",
}


def one_thread_env(**extra) -> dict:
    """This process's environment, one BLAS thread, then `extra`."""
    return {**os.environ, **ONE_THREAD, **extra}


def use_here() -> None:
    """The same environment for the grader's own process: its numpy checks
    the workers' values (the MNIST test error is a 10000-row product), and
    the process pools it starts inherit it. Called first by the command line
    and by a Dask worker's task. OpenBLAS reads its thread count when numpy
    loads; a numpy already loaded is told about huge pages directly."""
    os.environ.update(ONE_THREAD)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        core = getattr(numpy, "_core", None) or numpy.core  # numpy 2, numpy 1
        core.multiarray._set_madvise_hugepage(False)
