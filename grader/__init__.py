"""Autograding harness for the needle hw1 homework."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "reference"
HANDOUT = ROOT / "handout"
DATA = ROOT / "data"
