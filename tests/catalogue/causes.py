"""The proof table of the likely causes (issue 22): for each mutant of
mutants.py that loses Q1 or Q2 points, the catalogue entries
(grader/grading/explain/causes/catalogue.py) whose message its report may show.
An empty set: no `Likely cause:` line may appear at all (a known miss, or
a forward bug whose gradient values another cause also explains).

A report is diagnosed right when it shows at least one `Likely cause:`
line and every one it shows is an expected entry's message.
"""
from . import mutants

DIAGNOSED = {
    # gradient bugs
    "matmul_gradient_off_by_transpose": {"matmul_b_transposed_reshaped"},
    "matmul_gradient_ignores_batch_broadcast": {"matmul_no_batch_sum"},
    "summation_gradient_forgets_reshape": {"summation_no_reshape"},      # by numpy's error text
    "broadcast_gradient_sums_wrong_axes": {"sum_to_shape_left_aligned"},  # likewise
    "broadcast_gradient_no_sum": {"broadcast_identity"},
    "reshape_gradient_wrong_shape": {"reshape_identity"},
    "log_gradient_sign": {"log_sign"},
    "log_gradient_numpy": {"numpy_log"},
    "exp_gradient_numpy": {"numpy_exp"},
    "summation_gradient_numpy": {"numpy_summation"},
    "shape_gradients_numpy": {"numpy_broadcastto", "numpy_reshape", "numpy_transpose", "numpy_negate",
                              "numpy_divscalar"},
    "exp_gradient_uses_input": {"exp_of_input"},
    "divide_gradient_b_sign": {"divide_b_sign"},
    "power_scalar_gradient_off_by_one": {"power_scalar_not_lowered"},
    "ewise_pow_gradient_b_without_log": {"ewise_pow_b_no_log"},
    "transpose_gradient_ignores_axes": {"transpose_default_axes"},
    "negate_gradient_identity": {"negate_identity"},
    "divide_scalar_gradient_multiplies": {"divide_scalar_product"},
    # forward bugs (they cost Q2 too): named on Q1's cases
    "divide_scalar_multiplies": {"divide_scalar_compute_product"},
    "matmul_compute_dot": {"matmul_compute_dot"},
    "log_compute_base10": {"log_compute_base10"},
    "transpose_default_first_axes": {"transpose_compute_first_axes"},
    "transpose_reverses_all_axes_when_given": {"transpose_compute_reverses"},
}

GRADIENT_FUNCTIONS = (".gradient",)


def is_gradient_mutant(m) -> bool:
    """A bug planted in a gradient that costs Q2 points."""
    return "backward" in m.loses and all(getattr(e, "function", "").endswith(GRADIENT_FUNCTIONS) for e in m.edits)


GRADIENT_MUTANTS = [m for m in mutants.MUTANTS if is_gradient_mutant(m)]
MIN_RATE = 0.8   # of the gradient mutants, diagnosed right
