from .ops_mathematic import *
