"""Where and how a fit runs, wherever it runs: the class plan (labels, per-class C, targets,
seeds), the mode chooser and the cost models it reads."""
