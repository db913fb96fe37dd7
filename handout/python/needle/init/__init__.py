# Generated from reference/python/needle/init/__init__.py by `make handout`; do not edit.
from .init_basic import *
