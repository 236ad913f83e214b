"""Deterministic synthetic data: rcv1-shaped text (rcv1_like) and click-log-shaped rows
(click_like), as Problems or written as LIBSVM files (python -m dlinear make-data)."""
from .click_like import make_click_like, make_click_like_split
from .rcv1_like import make_rcv1_like, make_rcv1_like_split

__all__ = ["make_rcv1_like", "make_rcv1_like_split", "make_click_like", "make_click_like_split"]
