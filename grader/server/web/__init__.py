"""The HTTP side: the app factory (`app`), the mugrade protocol routes
(`api`, `casenotes`), the server-rendered pages (`pages`, `templates`,
`charts`), request limits (`limits`, `connections`) and the one error
answer (`refused`).

The core idea: every route validates its input by hand and answers a
mistake with one line of text saying what is wrong and how to fix it;
storage and grading live in the packages below, never here.
"""
