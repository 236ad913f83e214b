"""The scikit-learn-style estimators beyond their parity with LIBLINEAR (that is in
tests/parity/)."""
