# Generated from reference/python/needle/__init__.py by `make handout`; do not edit.
"""needle: a small numpy autodiff library (hw1)."""
from . import ops
from .ops import *
from .autograd import Tensor, cpu, all_devices
from . import init
from .init import ones, zeros, zeros_like, ones_like
