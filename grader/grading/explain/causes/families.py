"""Likely causes derived per op and per family of mistake, not listed one by one.

Each family is one transformation of an op's correct gradient, applied to
the reference's own `gradient` (a wrapper appended to the ops file), so a
family reaches every op it fits without a hand-written body:

  pass_through  out_grad returned unchanged for every input
  sign          one input's gradient negated
  no_out_grad   the local derivative alone, out_grad ignored (ones instead)
  factor        a factor of the derivative missing or extra (per op: its factor)
  transposed    one input's gradient transposed (the last two axes)
  swapped       the inputs' gradients in the wrong order
  detached      computed in numpy and wrapped in a new Tensor (off the graph)

Wrong axes and wrong reduced shapes need the op's own code (summing the
wrong axes, not reshaping before broadcasting): catalogue.py lists those.
A family that gives another family's values for an op is left out for it
(Negate's sign is its pass-through); where two still agree on a case, the
rule (likely_cause.py) names neither.
"""

from grader.grading.explain.causes.edits import OPS, Append

BACKWARD, Q6 = "backward", "nn_epoch_ndl"
RELU_CASES = ("nn_epoch_ndl_relu_backward",)  # a known ReLU bug runs only on these of Q6's cases

# op class -> (its input names, what it computes, families left out)
OPS_TABLE = {
    "PowerScalar": (("x",), "x^n", ()),
    "EWisePow": (("a", "b"), "a^b", ()),
    "EWiseDiv": (("a", "b"), "a / b", ()),
    "DivScalar": (("x",), "x / c", ("no_out_grad",)),
    "MatMul": (("a", "b"), "a @ b", ("no_out_grad",)),
    "Summation": (("x",), "a sum", ("sign", "no_out_grad")),
    "BroadcastTo": (("x",), "a broadcast", ("sign", "no_out_grad")),
    "Reshape": (("x",), "a reshape", ("sign", "no_out_grad")),
    "Negate": (("x",), "-x", ("sign", "no_out_grad")),
    "Transpose": (("x",), "a transpose", ("sign", "no_out_grad")),
    "Log": (("x",), "log(x)", ()),
    "Exp": (("x",), "exp(x)", ()),
    "ReLU": (("x",), "max(x, 0)", ("detached",)),  # its mask may come from numpy (the notebook says so)
}

# op -> [(input index or None for all, needle expression of the wrong gradient g, words)]
FACTORS = {
    "PowerScalar": [(0, "divide_scalar(g, self.scalar)", "forgets the factor n: the derivative of x^n is n x^(n-1)")],
    "EWisePow": [(0, "g / node.inputs[1]", "for a forgets the factor b: the derivative of a^b in a is b a^(b-1)")],
    "EWiseDiv": [
        (1, "g * node.inputs[1]", "for b divides by b once: the derivative of a/b in b is -a/b^2 (divide by b twice)")
    ],
    "DivScalar": [
        (
            0,
            "mul_scalar(g, self.scalar * self.scalar)",
            "multiplies by the scalar: the derivative of x / c is 1 / c, so divide out_grad by it",
        )
    ],
    "Exp": [
        (
            0,
            "g / node * node.inputs[0]",
            "multiplies out_grad by x: the derivative of exp(x) is exp(x) (the node's own value)",
        )
    ],
    "Log": [
        (
            0,
            "g * node.inputs[0] * node.inputs[0]",
            "multiplies by x where it must divide: the derivative of log(x) is 1/x",
        )
    ],
}

# Names (and words) kept from the catalogue's earlier hand-listed entries.
LEGACY = {
    ("Negate", "pass_through", None): (
        "negate_identity",
        "Negate.gradient passes out_grad through unchanged: the derivative of -x is -1, so negate out_grad",
    ),
    ("BroadcastTo", "pass_through", None): ("broadcast_identity", None),
    ("Summation", "pass_through", None): (
        "summation_identity",
        "Summation.gradient returns out_grad as it is: "
        "broadcast it back to the input's shape (after reshaping the summed "
        "axes to size 1)",
    ),
    ("Reshape", "pass_through", None): (
        "reshape_identity",
        "Reshape.gradient must reshape out_grad back to the input's shape",
    ),
    ("Transpose", "pass_through", None): (
        "transpose_identity",
        "Transpose.gradient returns out_grad as it is: swap the same two axes back",
    ),
    ("DivScalar", "pass_through", None): (
        "divide_scalar_identity",
        "DivScalar.gradient passes out_grad through: divide it by the scalar",
    ),
    ("Log", "sign", 0): ("log_sign", "Log.gradient has the wrong sign: the derivative of log(x) is +1/x"),
    ("EWiseDiv", "sign", 1): (
        "divide_b_sign",
        "EWiseDiv.gradient for b has the wrong sign: the derivative of a/b in b is -a/b^2",
    ),
    ("EWiseDiv", "swapped", None): (
        "divide_swapped",
        "EWiseDiv.gradient returns the two gradients in the wrong "
        "order: first a's (out_grad / b), then b's (-out_grad a / b^2)",
    ),
    ("Log", "no_out_grad", None): (
        "log_no_out_grad",
        "Log.gradient ignores out_grad: multiply the local derivative 1/x by out_grad (the chain rule)",
    ),
    ("Exp", "no_out_grad", None): (
        "exp_no_out_grad",
        "Exp.gradient ignores out_grad: multiply exp(x) by out_grad (the chain rule)",
    ),
    ("MatMul", "transposed", 1): (
        "matmul_b_transposed",
        "MatMul.gradient for b is transposed: it must be transpose(a) @ out_grad, which has b's shape",
    ),
    ("PowerScalar", "factor", 0): ("power_scalar_no_factor", None),
    ("EWiseDiv", "factor", 1): ("divide_b_once", None),
    ("DivScalar", "factor", 0): ("divide_scalar_product", None),
    ("Exp", "factor", 0): ("exp_of_input", None),
    ("Log", "factor", 0): ("log_product", None),
}

NUMPY = (
    "{op}.gradient is computed in numpy and wrapped in a new Tensor: build it from needle ops, so that "
    "the gradient can itself be differentiated (its gradient came out zero)"
)
NOT_SUMMED = (
    "your gradient is not summed over the axes that broadcasting added or stretched: "
    "BroadcastTo's adjoint must have the input's shape (sum over those axes, then reshape)"
)


def _wrap(op, tag, body):
    """Module code replacing op.gradient by the reference's, then `body` on its
    tuple `grads` (out_grad, node and self in scope)."""
    return Append(
        OPS,
        f"""
        def _family_{tag}(gradient):
            def wrong(self, out_grad, node):
                grads = gradient(self, out_grad, node)
                single = not isinstance(grads, tuple)
                grads = (grads,) if single else tuple(grads)
                {body}
                return grads[0] if single else grads
            return wrong


        {op}.gradient = _family_{tag}({op}.gradient)
        """,
    )


def _on(k, expression):
    return f"grads = tuple(({expression}) if i == {k} else g for i, g in enumerate(grads))"


def _detached(op, tag):
    return _wrap(op, tag, "grads = tuple(Tensor(g.numpy()) for g in grads)")


def derived(mutant_type) -> tuple:
    """Every op's family entries, as catalogue Mutants."""
    out = []

    def add(op, family, k, edit, message, shape_tells=False):
        inputs = OPS_TABLE[op][0]
        legacy_name, legacy_words = LEGACY.get((op, family, k), (None, None))
        suffix = "" if k is None or len(inputs) == 1 else f"_{inputs[k]}"
        name = legacy_name or f"{op.lower()}_{'gradients_' if family == 'swapped' else ''}{family}{suffix}"
        options = dict(questions=(Q6,), cases=RELU_CASES) if op == "ReLU" else {}
        out.append(mutant_type(name, legacy_words or message, (edit,), shape_tells=shape_tells, **options))

    for op, (inputs, what, skip) in OPS_TABLE.items():
        tag = op.lower()
        reshapes = op in ("Summation", "BroadcastTo", "Reshape", "Transpose", "MatMul")
        words = (
            NOT_SUMMED
            if op == "BroadcastTo"
            else f"{op}.gradient passes out_grad through unchanged: multiply it by the derivative of {what} "
            "(the chain rule), one gradient of each input's shape"
        )
        add(
            op,
            "pass_through",
            None,
            _wrap(op, f"{tag}_pass", "grads = tuple(out_grad for g in grads)"),
            words,
            shape_tells=reshapes,
        )
        for k, name in enumerate(inputs):
            which = f" for {name}" if len(inputs) > 1 else ""
            if "sign" not in skip:
                add(
                    op,
                    "sign",
                    k,
                    _wrap(op, f"{tag}_sign{k}", _on(k, "negate(g)")),
                    f"{op}.gradient{which} has the wrong sign: check the sign of the derivative of {what}",
                )
            if op == "MatMul":
                add(
                    op,
                    "transposed",
                    k,
                    _wrap(op, f"{tag}_t{k}", _on(k, "transpose(g)")),
                    f"MatMul.gradient{which} is transposed: a's gradient is out_grad @ transpose(b) and b's is "
                    "transpose(a) @ out_grad, each of its input's shape",
                    shape_tells=True,
                )
        if "no_out_grad" not in skip:
            ones = "Tensor(array_api.ones(out_grad.shape), requires_grad=False)"
            add(
                op,
                "no_out_grad",
                None,
                _wrap(
                    op,
                    f"{tag}_ones",
                    f"grads = tuple(gradient(self, {ones}, node)) if not single else (gradient(self, {ones}, node),)",
                ),
                f"{op}.gradient ignores out_grad: multiply the derivative of {what} by out_grad (the chain rule)",
            )
        if len(inputs) == 2:
            add(
                op,
                "swapped",
                None,
                _wrap(op, f"{tag}_swap", "grads = grads[::-1]"),
                f"{op}.gradient returns its gradients in the wrong order: one per input, in the order of node.inputs",
                shape_tells=op == "MatMul",
            )
        for k, expression, words in FACTORS.get(op, ()):
            add(op, "factor", k, _wrap(op, f"{tag}_factor{k}", _on(k, expression)), f"{op}.gradient {words}")
        if "detached" not in skip:
            out.append(mutant_type(f"numpy_{tag}", NUMPY.format(op=op), (_detached(op, f"{tag}_numpy"),)))
    return tuple(out)
