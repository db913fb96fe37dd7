"""`grader similarity`: which submissions share unusual code with each other
or with public solutions, judged only on what students wrote.

Trusted side, text only: student files are read as tokens (Python's
`tokenize`) and syntax trees (`ast.parse`), never imported or run. The pipeline, one module each:

- `corpus`: the submissions of a folder (subfolders and zips, named as
  grade-batch names them) and their student files' text;
- `tokens`: a file's tokens, the line range of each def/class, and the
  normalised token stream (names students chose and literals abstracted,
  comments and layout dropped);
- `template`: the handout's view: which functions hold a solution block,
  the names it gives everyone, its lines;
- `bindings`: what runs for each graded function (rebinding by
  assignment, alias, setattr or decorator; the student's own helpers),
  read from the syntax tree;
- `blocks`: each submission's code per graded function, found by the
  handout's markers (or, where a student damaged them, by function name),
  or what it was rebound to, and the rest the handout lacks ("other
  code"), with the flags that ask for a look whatever the score;
- `fingerprints`: k-grams of a block's tokens hashed with a stable hash
  (blake2b), winnowed;
- `scoring`: fingerprints weighted by how rare they are in the class, pairs
  scored and ranked;
- `clusters`: submissions linked by flagged pairs, as groups;
- `decisions`: an instructor's confirmed/dismissed pairs, tied to both
  sides' code, kept across runs;
- `report`, `cluster_report`: the CSVs, the HTML page and the
  fingerprints file (pure);
- `commands`: the command.
"""
