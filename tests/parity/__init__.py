"""dlinear's optima against LIBLINEAR 2.50 (liblinear-official) and scikit-learn: the files
the mutation check (every solver at 10x its eps) must see fail."""
