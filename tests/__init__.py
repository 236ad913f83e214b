"""dlinear's tests, grouped by what they exercise (a package, so that the groups and
tests.support import by their full names from the repository root)."""
