"""Grading many submissions: the batch run, its records and gradebook,
regrades, and the Dask cluster path."""
