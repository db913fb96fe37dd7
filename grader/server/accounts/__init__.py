"""Who may use the server: users with a role (student, TA, instructor), their
keys and browser sessions (`users`); one identity per person (`identity`);
keys reissued, revoked, accounts removed (`lifecycle`); a roster synced
(`roster`).

The core idea: a key is shown once and stored only as its sha256; a session
is a row in the database, so every server process accepts it and signing out
(or a revoked key) ends it everywhere.
"""
