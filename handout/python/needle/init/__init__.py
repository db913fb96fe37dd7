from .init_basic import *
