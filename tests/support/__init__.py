"""What the tests share: LIBLINEAR as the reference (liblinear_oracle), the clusters they
start (clusters), the commands run in the test process (cli), and their measures of
models and paths (measures)."""
