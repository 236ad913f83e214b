"""Kernels built without a Python entry point (dlinear.kernels.kernel_only) are called
by other kernels only: called from Python, such a function would crash the process."""
import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "dlinear" / "kernels"


def kernel_only_functions():
    """{name: module} of every kernel-only function under dlinear/kernels: decorated with
    @kernel_only, or made by a module-level factory that returns kernel_only(...)."""
    found = {}
    for path in sorted(KERNELS.glob("*.py")):
        text = path.read_text()
        names = re.findall(r"^@kernel_only\ndef (\w+)\(", text, re.M)
        factories = re.findall(r"^def (\w+)\((?:(?!^def ).)*?^    return kernel_only\(",
                               text, re.M | re.S)
        if factories:
            names += re.findall(rf"^(\w+) = (?:{'|'.join(factories)})\(", text, re.M)
        for name in names:
            found[name] = f"dlinear.kernels.{path.stem}"
    return found


def test_kernel_only_functions_have_no_entry_point():
    found = kernel_only_functions()
    assert {"_scan_number", "_scan_fast_path_number", "_token_end", "shuffle_prefix"} <= set(found)
    for name, module in found.items():
        options = getattr(importlib.import_module(module), name).targetoptions
        assert options.get("no_cpython_wrapper") and options.get("no_cfunc_wrapper"), name


def test_no_python_code_outside_the_kernels_calls_a_kernel_only_function():
    names = kernel_only_functions()
    calls = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\s*\(")
    outside = [p for folder in ("dlinear", "scripts", "tests")
               for p in (ROOT / folder).rglob("*.py")
               if KERNELS not in p.parents and p != Path(__file__).resolve()]
    named = {str(p.relative_to(ROOT)): sorted(set(calls.findall(p.read_text())))
             for p in outside}
    assert {p: n for p, n in named.items() if n} == {}
