"""Running the case workers for one library copy and reading what they
left: the run's settings (config.py), the sandboxed workers, the drawn
inputs and their seeds, the reference's expected values, time limits,
the submission's files and git objects. The lowest layer of grading."""
