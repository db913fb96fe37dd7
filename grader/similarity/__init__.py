"""`grader similarity`: which submissions share unusual code with each other
or with public solutions, judged only on what students wrote.

Trusted side, text only: student files are read and tokenized (Python's
`tokenize`), never imported or run. The pipeline, one module each:

- `corpus`: the submissions of a folder (subfolders and zips, named as
  grade-batch names them) and their student files' text;
- `tokens`: a file's tokens, the line range of each def/class, and the
  normalised token stream (names students chose and literals abstracted,
  comments and layout dropped);
- `template`: the handout's view: which functions hold a solution block,
  the names it gives everyone, its lines;
- `blocks`: each submission's solution blocks, found by the handout's
  markers (or, where a student damaged them, by function name);
- `fingerprints`: k-grams of a block's tokens hashed with a stable hash
  (blake2b), winnowed;
- `scoring`: fingerprints weighted by how rare they are in the class, pairs
  scored and ranked;
- `report`: the CSV, the HTML page and the fingerprints file (pure);
- `commands`: the command.
"""
