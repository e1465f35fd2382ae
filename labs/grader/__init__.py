"""Lets `python3 -m grader` work from labs/ (see __main__.py); not a lab: no grading.toml."""
