"""dlinear's benchmarks: an asv suite (the modules whose names asv collects: ``time_*``,
``peakmem_*``, ``track_*``) and runnable modules for what asv cannot express
(``python -m benchmarks.<module>``). ``shapes`` makes the data sets, ``harness`` times
runs and runs the peers (LIBLINEAR 2.50, scikit-learn); see scripts/benchmarks/README.md."""
