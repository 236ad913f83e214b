"""The installed console scripts (dlinear-train, -predict, -submit, -status) as separate
processes, and the installed package."""
