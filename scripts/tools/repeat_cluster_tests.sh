#!/usr/bin/env bash
# The tests that start or use a Dask cluster (marker `cluster`), run RUNS times in a row
# (default 3), each run a new pytest process; stops at the first run that fails. A cluster
# that errors now and then in its set-up or tear-down shows here before it shows in a run
# of the whole suite. Extra arguments go to pytest, e.g.
#     scripts/tools/repeat_cluster_tests.sh 3 -p random_order --random-order-bucket=module
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
shift || true
for run in $(seq 1 "$runs"); do
    echo "cluster tests: run $run of $runs"
    python -m pytest -q -p no:cacheprovider -m cluster "$@"
done
