# Generated from reference/python/needle/ops/__init__.py by `make handout`; do not edit.
from .ops_mathematic import *
