"""Time policy: deadlines in force, per-student extensions, late days with a
course budget, a late-penalty rule, the course's time zone, and verdicts that
follow the published answers in force.

`rules` reads the policy (assignment.toml's [policy.time], or the course's
override on the server) and times typed by people (zones, durations);
`clock` reads what is in force now from the database; `judge` derives each
server answer's lateness and credit from its arrival time, and spends late
days (pure); `changes` logs every change (who, when, what, from, to);
`extensions` grants and clears them; `regrade` re-judges stored answers
against a republished question; `commands` are the CLI.

The core idea: nothing about lateness is stored with an answer; it is judged
each time a page or export is made, so moving a deadline or granting an
extension re-judges every earlier answer, and the log says why.
"""
