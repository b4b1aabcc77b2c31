"""Benchmarks of dsh-user-questions: ``python -m benchmarks`` (or ``tox -e bench``)."""
