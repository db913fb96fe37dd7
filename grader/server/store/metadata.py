"""The one SQLAlchemy MetaData every table of the server joins: the protocol
tables (db.py) and the gradebook's (records.py) define themselves on it."""

from sqlalchemy import MetaData

metadata = MetaData()
