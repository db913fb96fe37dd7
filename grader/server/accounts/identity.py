"""One identity per person: how names and e-mails are compared, and which
characters no name or e-mail may hold.

Two spellings are one identity when they agree after Unicode NFC
normalisation and case folding: "José" typed on Linux and the decomposed
"José" macOS writes in folder names, "BOB@uni.edu" and "bob@uni.edu".

Characters that let two different identities look alike are refused, each
named in the message:
- invisible ones: format characters (ZERO WIDTH SPACE, RIGHT-TO-LEFT
  OVERRIDE, SOFT HYPHEN...), control characters, spaces other than U+0020;
- variants which Unicode itself equates with another letter: KELVIN SIGN
  and OHM SIGN (which NFC silently turns into K and Ω), fullwidth letters,
  ligatures;
- a word mixing Latin letters with Cyrillic or Greek ones ("Kаte" with a
  Cyrillic а), the usual way to fake a Latin name.
"""

import re
import unicodedata
from typing import Optional

_INVISIBLE = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")
_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK")
_WORDS = re.compile(r"[\s@._+\-]+")


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def key(text: str) -> str:
    """What two spellings of one identity share: NFC, case folded."""
    return nfc(nfc(text).casefold())


def describe(char: str) -> str:
    """A character as a message names it: U+212A KELVIN SIGN."""
    unnamed = "(a byte that is not UTF-8)" if unicodedata.category(char) == "Cs" else "(unnamed)"
    return f"U+{ord(char):04X} {unicodedata.name(char, unnamed)}"


def _script(char: str) -> Optional[str]:
    if not char.isalpha():
        return None
    name = unicodedata.name(char, "")
    return next((s for s in _SCRIPTS if name.startswith(s + " ")), None)


def _mixed_script(text: str) -> Optional[str]:
    for word in _WORDS.split(text):
        scripts = [(s, c) for c in word for s in (_script(c),) if s]
        found = {s for s, _ in scripts}
        if len(found) > 1:
            main = max(found, key=lambda s: (sum(x == s for x, _ in scripts), s == "LATIN"))
            odd = next(c for s, c in scripts if s != main)
            return f"{describe(odd)} among {main.title()} letters (it looks like another letter)"
    return None


def refused(text: str) -> Optional[str]:
    """Why `text` cannot name a person (naming the first offending character), else None."""
    for char in text:  # before NFC, which turns a KELVIN SIGN into a K
        if not unicodedata.category(char).startswith("M") and nfc(char) != char:
            return f"holds {describe(char)}, which stands for {nfc(char)!r}"
    text = nfc(text)
    for char in text:
        category = unicodedata.category(char)
        if category in _INVISIBLE or (category == "Zs" and char != " "):
            return f"holds the invisible character {describe(char)}"
        compatible = unicodedata.normalize("NFKC", char)
        if compatible != char:
            return f"holds {describe(char)}, which stands for {compatible!r}"
    problem = _mixed_script(text)
    return f"holds {problem}" if problem else None
