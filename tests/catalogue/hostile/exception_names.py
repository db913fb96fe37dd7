# Writes what a case looks like into the failure a hidden case shows:
# @MODE@ "class" raises an exception whose class name carries it (a class
# the student names), "stub" a NotImplementedError shaped like the
# handout's stubs ("Q2: Name") with it as the name.
import sys

_inputs = "LEAK_" + "_".join(f"{a!r}"[:12] for a in sys._getframe(1).f_locals.get("args", ())[:1])
_inputs = "".join(c if c.isalnum() or c == "_" else "x" for c in _inputs)[:50]
if "@MODE@" == "stub":
    raise NotImplementedError(f"Q2: {_inputs}")
raise type(_inputs, (ValueError,), {})("a hidden input, in the class name")
