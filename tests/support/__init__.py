"""What the tests share: LIBLINEAR as the reference (liblinear_oracle), the clusters they
start (clusters), and their measures of models and paths (measures)."""
