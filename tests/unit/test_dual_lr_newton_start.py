"""-s 7's one-variable sub-problem (kernels.dual_cd_lr.one_variable_newton): where Newton
must step it may start from z0, the zero of the log and linear terms of g', instead of
LIBLINEAR's start."""
import math

from dlinear.kernels.dual_cd_lr import one_variable_newton

# alpha_i at LIBLINEAR's starting value 1e-8, C_i = 1, so z_old = 1e-8 on the alpha side
A1, A2, C = 1e-8, 1.0 - 1e-8, 1.0


def g_prime(a, b, z_old, z):
    return a * (z - z_old) + b + math.log(z / (C - z))


def test_newton_from_z0_converges_in_few_steps():
    # z0 = 1 / (1 + e^0.8) = 0.31 is far nearer the solution (0.258) than 1e-8, where
    # LIBLINEAR's Newton starts and takes about ten steps
    _, z, sign, steps = one_variable_newton(1.0, 0.8, A1, A2, C, 1e-8)
    assert sign == 1.0
    assert abs(g_prime(1.0, 0.8, A1, z)) < 1e-8
    assert steps <= 4


def test_z0_beyond_half_of_c_keeps_liblinears_start():
    # z0 = 1 / (1 + e^-0.3) = 0.57 > C/2, where g' is no longer concave
    _, z, _, steps = one_variable_newton(1.0, -0.3, A1, A2, C, 1e-8)
    assert abs(g_prime(1.0, -0.3, A1, z)) < 1e-8
    assert steps > 4


def test_a_start_within_tolerance_counts_as_a_step():
    # with a ~ 0, g'(z0) ~ 0: no Newton step follows, but the move to z0 must be stored
    # by the caller, which stores a solution only when the step count is positive
    _, z, _, steps = one_variable_newton(1e-12, 0.8, A1, A2, C, 1e-2)
    assert z == C / (1.0 + math.exp(0.8))
    assert steps == 1
