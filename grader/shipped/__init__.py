"""What runs beside student code or ships to students: the sandboxed
worker (worker.py, the cases package, where.py), the renderers a student's
own run uses (likely_cause, smallest, github_ci, classroom50_*), the
comparison code (tolerance, compare, checks) and the course's client
(mugrade.py).

Its modules import only each other (relative imports), the standard library
and numpy, so that they are copied as they are into a worker's folder and
into the handout. The trusted side may import the pure ones (comparison,
rendering, the case table's types) for their functions; it never runs
worker.py or imports student code through them."""
