"""Checks for `make check`: each module's check_* functions return a list of problems."""
