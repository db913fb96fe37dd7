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

ONE_THREAD = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMPY_MADVISE_HUGEPAGE": "0",
}


def one_thread_env(**extra) -> dict:
    """This process's environment, one BLAS thread, then `extra`."""
    return {**os.environ, **ONE_THREAD, **extra}
