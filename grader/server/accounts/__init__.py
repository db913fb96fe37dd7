"""Who may use the server: users with a role, their keys, browser sessions.

The core idea: a key is shown once and stored only as its sha256; a session
is a row in the database, so every server process accepts it and signing out
ends it everywhere.
"""
