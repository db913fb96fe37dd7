"""The one exception a route raises to answer with an HTTP error. Its own
module so the routes (api, pages, casenotes) and the app that installs its
handler import it without importing each other."""

from typing import Optional


class Refused(Exception):
    """An HTTP error answer: status, one line of text, optional headers."""

    def __init__(self, status: int, text: str, headers: Optional[dict] = None):
        super().__init__(text)
        self.status, self.text, self.headers = status, text, headers or {}
