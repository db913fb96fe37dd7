"""The class gradebook: `load` reads server submissions and imported
grade-batch results (`importer`, its folders matched to accounts by
`matching`, its batch named by `batch_identity`, its changes planned by
`import_plan`) into the same plain records, `scores` does
the arithmetic (scores, lateness, CSV), `details` lists one student's cases
with the reasons they were wrong; `declared` reads what the assignment's
registry says of its questions and cases (their order, descriptions);
`freshness` reads, in one query, a version of all one student's page shows
(a cached page is reused while it holds); `policy` says which grade counts
(sandboxed or server, best or last) per assignment and question; `exports`
writes points for an LMS (Canvas, Moodle, plain CSV); `timing` is the time policy
(deadlines in force, extensions, late days, late penalties, the course's zone,
republished answers re-judging stored ones, and the log of every change), by
which `load` judges each server answer's lateness at read time.

The core idea: one record type for both sources, and the arithmetic a pure
function of those records, tested without a server.
"""
