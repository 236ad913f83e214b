"""The Dask engine: local clusters, separate scheduler and worker processes, the deploy
recipes."""
