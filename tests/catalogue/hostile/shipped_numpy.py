# A numpy.py / sitecustomize.py / conftest.py shipped beside the student's
# files: if the grader ever imported one, every worker would die at once.
import os
os._exit(0)
