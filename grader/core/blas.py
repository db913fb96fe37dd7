"""The single-thread BLAS environment every process the grader starts gets:
on these machines one OpenBLAS thread is about 5x faster than the default,
and concurrent workers must not oversubscribe the cores."""

import os

ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def one_thread_env(**extra) -> dict:
    """This process's environment, one BLAS thread, then `extra`."""
    return {**os.environ, **ONE_THREAD, **extra}
