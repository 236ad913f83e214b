"""The command line: dlinear-train and dlinear-predict (train_predict), python -m dlinear
(main), dlinear-submit and dlinear-status (jobs), and how each answers (exit, inputs)."""
