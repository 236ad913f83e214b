"""Training in this process: LIBLINEAR's train() (train), cross-validation and the -C search
(model_selection), and the partitioned dual CD simulated in one process (simulated)."""
