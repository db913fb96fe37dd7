"""One graded submission's results: case results, scores, provenance,
and the files written for it."""
