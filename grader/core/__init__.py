"""The core the rest of the grader stands on: an assignment as data (its
case registry, handout manifest and solution markers), where files are,
and how files and CSVs are written. Imports nothing above it: only
grader.shipped (the case table's types), the standard library and numpy."""
