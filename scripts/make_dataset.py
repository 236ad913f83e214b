#!/usr/bin/env python
"""Write a deterministic rcv1-like data set in LIBSVM format.

    python scripts/make_dataset.py OUT_PREFIX --rows N [--test-rows M] [--features F]
        [--classes K] [--nnz-per-row Z] [--label-noise P] [--seed S] [--decimals D]

writes OUT_PREFIX.train (and OUT_PREFIX.test when M > 0); the same as
`python -m dlinear make-data ...`. See dlinear/datasets.py for the data model.
"""
import os
import sys

# Run from a checkout without installing: put the repository root on the path.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from dlinear.datasets import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(prog="make_dataset.py"))
