"""What the gradebook knows of an assignment beyond its database: the order
of its questions, the descriptions of its cases and its [policy], read from the case
registry of the assignment this installation grades (its assignment.toml,
through `grader.core.assignment`). The server names no assignment's cases
package, so another assignment needs no change here.

An assignment the server has no assignment.toml for still shows: its
questions ordered by name, its imported cases described by their output.
"""

from dataclasses import dataclass, field
from functools import lru_cache

from grader.core.assignment import Assignment, AssignmentError, Policy
from grader.core.registry import RegistryLoadError


@dataclass(frozen=True)
class Declared:
    questions: tuple = ()  # question keys, in the handout's order
    descriptions: dict = field(default_factory=dict)  # case name -> the grader's description of it
    policy: Policy = Policy()  # its assignment.toml's [policy]: which grade counts


@lru_cache(maxsize=None)
def of(name: str) -> Declared:
    """The questions and cases of the assignment called `name`; empty when it is not this installation's."""
    try:
        assignment = Assignment.option()
        if assignment.name != name:
            return Declared()
        registry = assignment.registry()
    except (AssignmentError, RegistryLoadError):
        return Declared()  # an install without the assignment's files: a gradebook all the same
    return Declared(
        tuple(q.key for q in registry.questions), {c.name: c.description for c in registry.cases}, assignment.policy
    )
