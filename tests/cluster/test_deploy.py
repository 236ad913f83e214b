"""deploy/: the Docker, Kubernetes, Slurm and TLS recipes are checked without Docker,
kubectl or Slurm: the files parse, say what they must (ports, commands, the shared /data
volume, the image built from this repository), and every dlinear-train / dlinear-submit /
dlinear-status / slurm_cluster.py command in their READMEs and comments takes options
they accept."""
import fnmatch
import importlib.util
import os
import posixpath
import py_compile
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import dlinear
from dlinear.cli.train_predict import parse_train_args
from dlinear.datasets.rcv1_like import make_rcv1_like

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
DOCKER = DEPLOY / "docker"
K8S = DEPLOY / "kubernetes"
SLURM = DEPLOY / "slurm"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _words(command) -> list:
    return shlex.split(command) if isinstance(command, str) else [str(c) for c in command]


def _has_sequence(words: list, *sequence) -> bool:
    n = len(sequence)
    return any(tuple(words[i:i + n]) == sequence for i in range(len(words) - n + 1))


# --------------------------------------------------------------------------- Docker

def _dockerfile_instructions(path: Path) -> list:
    """[(INSTRUCTION, arguments)], continuation lines joined, comments dropped."""
    instructions, current = [], ""
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if current and stripped.startswith("#"):
            continue
        current += " " + stripped[:-1] if stripped.endswith("\\") else " " + stripped
        if not stripped.endswith("\\"):
            keyword, _, rest = current.strip().partition(" ")
            instructions.append((keyword.upper(), rest.strip()))
            current = ""
    return instructions


def _dockerignore_includes(patterns: list, path: str) -> bool:
    """Docker's rule, simplified: the last pattern matching the path or a parent wins."""
    parts = path.split("/")
    candidates = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    included = True
    for pattern in patterns:
        negate = pattern.startswith("!")
        pattern = pattern.lstrip("!").strip("/")
        forms = [pattern] + ([pattern[3:]] if pattern.startswith("**/") else [])
        if any(fnmatch.fnmatchcase(c, f) for c in candidates for f in forms):
            included = negate
    return included


def test_dockerfile_installs_this_repository():
    instructions = _dockerfile_instructions(DOCKER / "Dockerfile")
    assert instructions[0] == ("FROM", "python:3.11-slim")
    workdir, copied, pip_targets, users = "/", {}, [], []
    for keyword, args in instructions:
        if keyword == "WORKDIR":
            workdir = posixpath.join(workdir, args)
        elif keyword == "COPY":
            *sources, dest = [w for w in shlex.split(args) if not w.startswith("--")]
            dest = posixpath.join(workdir, dest)
            into_directory = dest.endswith("/") or len(sources) > 1
            for source in sources:
                matches = sorted(ROOT.glob(source))
                assert matches or "*" in source, f"COPY {source}: not in the repository"
                for m in matches:
                    # a directory's contents go to dest; a file to dest/name or to dest
                    target = (dest if m.is_dir() or not into_directory
                              else posixpath.join(dest, m.name))
                    copied[m.relative_to(ROOT).as_posix()] = posixpath.normpath(target)
        elif keyword == "RUN":
            words = shlex.split(args)
            for i in range(len(words) - 1):
                if words[i] == "pip" and words[i + 1] == "install" or \
                        words[i:i + 4] == ["python", "-m", "pip", "install"]:
                    start = i + 2 if words[i] == "pip" else i + 4
                    target = next(w for w in words[start:] if not w.startswith("-"))
                    pip_targets.append(posixpath.normpath(posixpath.join(workdir, target)))
        elif keyword == "USER":
            users.append(args)
    # pyproject.toml and the package go into one directory, which pip installs
    assert "pyproject.toml" in copied and "dlinear" in copied
    project_dir = posixpath.dirname(copied["pyproject.toml"])
    assert copied["dlinear"] == posixpath.join(project_dir, "dlinear")
    assert project_dir in pip_targets, (copied, pip_targets)
    # it runs as an unprivileged user, the scheduler by default
    assert users and users[-1].split(":")[0] not in ("root", "0")
    cmd = dict(instructions)["CMD"]
    assert yaml.safe_load(cmd) == ["dask", "scheduler"]
    assert "8786" in dict(instructions)["EXPOSE"].split()


def test_dockerignore_keeps_the_package_and_drops_the_rest():
    patterns = [line.strip() for line in (DOCKER / "Dockerfile.dockerignore").read_text()
                .splitlines() if line.strip() and not line.startswith("#")]
    for path in ["pyproject.toml", "dlinear/__init__.py", "dlinear/kernels/dual_cd_svc.py",
                 "dlinear/cli/jobs.py"]:
        assert _dockerignore_includes(patterns, path), path
    for path in ["bench-data/parse.svm", ".git/HEAD", ".ci-venv/bin/python", "tests/x.py",
                 "dlinear/__pycache__/data.cpython-311.pyc", "scripts/benchmarks/solvers.py"]:
        assert not _dockerignore_includes(patterns, path), path


def test_compose_scheduler_and_workers_share_data():
    text = (DOCKER / "docker-compose.yml").read_text()
    compose = yaml.safe_load(text)
    services = compose["services"]
    assert set(services) == {"scheduler", "worker"}
    scheduler, worker = services["scheduler"], services["worker"]

    # one image, built from this repository's Dockerfile, for both
    for service in services.values():
        build = service["build"]
        context = (DOCKER / build["context"]).resolve()
        assert context == ROOT
        assert (context / build["dockerfile"]).resolve() == (DOCKER / "Dockerfile").resolve()
    assert scheduler["image"] == worker["image"]

    assert _has_sequence(_words(scheduler["command"]), "dask", "scheduler")
    assert "8786:8786" in [str(p) for p in scheduler["ports"]]
    words = _words(worker["command"])
    assert _has_sequence(words, "dask", "worker") and "tcp://scheduler:8786" in words
    assert _has_sequence(words, "--nthreads", "1")
    assert worker["depends_on"] and "scheduler" in worker["depends_on"]

    # the shared volume: the same source at /data on every service
    def data_source(service):
        for volume in service["volumes"]:
            if isinstance(volume, str):     # SOURCE:TARGET[:MODE]; SOURCE may hold ${X:-y}
                source, target = re.fullmatch(r"(.*):(/[^:]*)(?::\w+)?", volume).groups()
            else:
                source, target = volume["source"], volume["target"]
            if target == "/data":
                return source
        raise AssertionError(f"no volume at /data in {service}")
    assert len({data_source(s) for s in services.values()}) == 1

    # the comment at the top says how to scale and how to train
    comments = "\n".join(line for line in text.splitlines() if line.lstrip().startswith("#"))
    assert re.search(r"docker compose up .*--scale worker=\d+", comments)
    assert ("dlinear-train --scheduler tcp://localhost:8786 /data/train.svm /data/model"
            in comments)


# --------------------------------------------------------------------------- Kubernetes

def _containers(pod_spec):
    return {c["name"]: c for c in pod_spec["containers"]}


def _mount_claims(pod_spec, container):
    volumes = {v["name"]: v for v in pod_spec.get("volumes", [])}
    return {m["mountPath"]: volumes[m["name"]].get("persistentVolumeClaim", {}).get("claimName")
            for m in container.get("volumeMounts", [])}


def test_kubernetes_manifests():
    docs = [d for d in yaml.safe_load_all((K8S / "dlinear-cluster.yaml").read_text()) if d]
    kinds = sorted(d["kind"] for d in docs)
    assert kinds == ["Deployment", "Deployment", "PersistentVolumeClaim", "Service"]
    [claim] = [d for d in docs if d["kind"] == "PersistentVolumeClaim"]
    assert "ReadWriteMany" in claim["spec"]["accessModes"]
    [service] = [d for d in docs if d["kind"] == "Service"]
    deployments = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Deployment"}
    scheduler = next(d for d in deployments.values() if "scheduler" in d["metadata"]["name"])
    worker = next(d for d in deployments.values() if "worker" in d["metadata"]["name"])
    assert scheduler["spec"]["replicas"] == 1

    # the Service selects the scheduler's pods and exposes 8786
    labels = scheduler["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert scheduler["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert not service["spec"]["selector"].items() <= \
        worker["spec"]["template"]["metadata"]["labels"].items()
    assert 8786 in [p["port"] for p in service["spec"]["ports"]]

    [s_container] = scheduler["spec"]["template"]["spec"]["containers"]
    words = _words(s_container.get("command", []) + s_container.get("args", []))
    assert _has_sequence(words, "dask", "scheduler")
    assert 8786 in [p["containerPort"] for p in s_container["ports"]]

    # workers: the scheduler's address (the Service's name), one thread, resources
    [w_container] = worker["spec"]["template"]["spec"]["containers"]
    words = _words(w_container.get("command", []) + w_container.get("args", []))
    assert _has_sequence(words, "dask", "worker")
    assert f"tcp://{service['metadata']['name']}:8786" in words
    assert _has_sequence(words, "--nthreads", "1")
    requests = w_container["resources"]["requests"]
    assert "cpu" in requests and "memory" in requests
    assert s_container["image"] == w_container["image"]

    # the shared claim at /data on both
    for deployment, container in ((scheduler, s_container), (worker, w_container)):
        claims = _mount_claims(deployment["spec"]["template"]["spec"], container)
        assert claims.get("/data") == claim["metadata"]["name"]

    # s3:// training files: the workers get the object store's keys from the Secret
    [secret] = [d for d in yaml.safe_load_all((K8S / "s3-secret.yaml").read_text()) if d]
    assert secret["kind"] == "Secret"
    assert {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} <= set(secret["stringData"])
    assert {"secretRef": {"name": secret["metadata"]["name"], "optional": True}} in \
        w_container["envFrom"]


def test_daskcluster_resource():
    [cluster] = [d for d in yaml.safe_load_all((K8S / "daskcluster.yaml").read_text()) if d]
    assert cluster["apiVersion"] == "kubernetes.dask.org/v1"
    assert cluster["kind"] == "DaskCluster"
    claim_name = next(d for d in yaml.safe_load_all((K8S / "dlinear-cluster.yaml").read_text())
                      if d and d["kind"] == "PersistentVolumeClaim")["metadata"]["name"]
    spec = cluster["spec"]
    assert spec["worker"]["replicas"] >= 1

    worker_pod = spec["worker"]["spec"]
    [w_container] = worker_pod["containers"]
    words = _words(w_container.get("command", []) + w_container.get("args", []))
    assert _has_sequence(words, "dask", "worker") and _has_sequence(words, "--nthreads", "1")
    # the operator passes the scheduler's address in $DASK_SCHEDULER_ADDRESS: keep it
    assert not any(e["name"] == "DASK_SCHEDULER_ADDRESS" for e in w_container.get("env", []))
    assert "cpu" in w_container["resources"]["requests"]

    scheduler_pod = spec["scheduler"]["spec"]
    [s_container] = scheduler_pod["containers"]
    words = _words(s_container.get("command", []) + s_container.get("args", []))
    assert _has_sequence(words, "dask", "scheduler")
    ports = {p["name"]: p for p in spec["scheduler"]["service"]["ports"]}
    assert ports["tcp-comm"]["port"] == 8786
    assert spec["scheduler"]["service"]["selector"] == {
        "dask.org/cluster-name": cluster["metadata"]["name"], "dask.org/component": "scheduler"}
    assert s_container["image"] == w_container["image"]
    for pod, container in ((worker_pod, w_container), (scheduler_pod, s_container)):
        assert _mount_claims(pod, container).get("/data") == claim_name


# --------------------------------------------------------------------------- Slurm

def test_slurm_script_compiles(tmp_path):
    py_compile.compile(str(SLURM / "slurm_cluster.py"), cfile=str(tmp_path / "s.pyc"),
                       doraise=True)


def test_slurm_job_script():
    pytest.importorskip("dask_jobqueue")
    slurm = _load(SLURM / "slurm_cluster.py", "slurm_cluster")
    cluster = slurm.make_cluster(queue="debug", walltime="00:30:00", memory="2GB",
                                 account="proj42", job_extra=["--constraint=skylake"],
                                 scheduler_options={"host": "127.0.0.1",
                                                    "dashboard_address": None})
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    sbatch = [line for line in script.splitlines() if line.startswith("#SBATCH")]
    assert "#SBATCH -p debug" in sbatch
    assert "#SBATCH -t 00:30:00" in sbatch
    assert "#SBATCH -A proj42" in sbatch
    assert "#SBATCH --constraint=skylake" in sbatch
    assert "#SBATCH --cpus-per-task=1" in sbatch
    assert any(line.startswith("#SBATCH --mem=") for line in sbatch)
    [command] = [line for line in script.splitlines()
                 if "distributed.cli.dask_worker" in line or "dask worker" in line]
    assert _has_sequence(command.split(), "--nthreads", "1")
    assert "tcp://127.0.0.1:" in command


FAKE_SBATCH = """#!/bin/bash
# sbatch for the test: runs the job script in the background, as its own process group
script="${@: -1}"
cp "$script" "$FAKE_SLURM_DIR/job.$$.sh"
setsid bash "$FAKE_SLURM_DIR/job.$$.sh" > "$FAKE_SLURM_DIR/job.$$.out" 2>&1 < /dev/null &
echo "Submitted batch job $!"
"""
FAKE_SCANCEL = """#!/bin/bash
for id in "$@"; do kill -TERM -- "-$id" 2>/dev/null || kill -TERM "$id" 2>/dev/null; done
exit 0
"""


@pytest.mark.cluster
@pytest.mark.skipif(sys.platform == "win32" or shutil.which("bash") is None
                    or shutil.which("setsid") is None, reason="needs bash and setsid")
def test_slurm_script_trains_with_a_fake_sbatch(tmp_path):
    """slurm_cluster.py end to end, with sbatch/scancel stand-ins that run the job scripts
    on this machine: the model equals the one trained in-process."""
    pytest.importorskip("dask_jobqueue")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("sbatch", FAKE_SBATCH), ("scancel", FAKE_SCANCEL)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    data = tmp_path / "train.svm"
    dlinear.write_libsvm(data, make_rcv1_like(300, n_features=200, n_classes=3,
                                              nnz_per_row=15, seed=4))
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
               FAKE_SLURM_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT),
                                                        os.environ.get("PYTHONPATH")])))
    env.pop("DLINEAR_SCHEDULER", None)
    # the reference first: with a cold Numba cache the workers load its compiled kernels
    params, _, _, _ = parse_train_args(["-s", "1", "-c", "0.5", str(data)])
    dlinear.save_model(tmp_path / "reference", dlinear.train(dlinear.read_libsvm(data), params))
    r = subprocess.run([sys.executable, str(SLURM / "slurm_cluster.py"), "-q", "--jobs", "2",
                        "--queue", "debug", "--memory", "1GB", "--interface", "lo",
                        "-s", "1", "-c", "0.5", data, tmp_path / "model"],
                       capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    logs = "\n".join(p.read_text() for p in tmp_path.glob("job.*.out"))
    assert r.returncode == 0, (r.stdout, r.stderr, logs)
    assert len(list(tmp_path.glob("job.*.sh"))) == 2
    assert (tmp_path / "model").read_bytes() == (tmp_path / "reference").read_bytes()


# --------------------------------------------------------------------------- READMEs

# the first words of the commands quoted in comments (the rest of a comment is prose)
COMMAND_WORDS = {"dlinear-train", "dlinear-submit", "dlinear-status", "python", "python3", "docker", "kubectl", "helm", "dask",
                 "sbatch", "mkdir", "cp", "export", "openssl"}


def _shell_commands(path: Path) -> list:
    """Shell commands of a file: the lines of the fenced code blocks of a Markdown file,
    the '#' comment lines of other files that start with a command; continuation lines
    joined."""
    text = path.read_text()
    if path.suffix == ".md":
        lines = []
        for block in re.findall(r"^[ \t]*```[a-z]*\n(.*?)^[ \t]*```", text, re.S | re.M):
            lines += block.splitlines()
    elif path.suffix == ".rst":
        lines = _rst_shell_lines(text)
    else:
        lines, continued = [], False
        for line in text.splitlines():
            line = line.strip()
            if not line.startswith("#"):
                continued = False
                continue
            line = line[1:].strip()
            if continued or line.split(" ", 1)[0] in COMMAND_WORDS:
                lines.append(line)
            continued = line.endswith("\\")
    commands, current = [], ""
    for line in lines:
        line = line.strip()
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        commands.append(current + line)
        current = ""
    return [c for c in commands if c]


def _rst_shell_lines(text: str) -> list:
    """The lines of the ``.. code-block:: sh`` (bash, console, shell) blocks of a
    reStructuredText file: the indented lines that follow the directive."""
    lines, inside = [], False
    for line in text.splitlines():
        if re.match(r"^\s*\.\. code-block:: (sh|bash|console|shell)\s*$", line):
            inside = True
        elif inside and line.strip() and not line[0].isspace():
            inside = False
        elif inside and line.strip():
            lines.append(line)
    return lines


SHELL_OPERATORS = {"|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1"}


def _arguments_after(command: str, program: str):
    """The arguments of `program` in a shell command line, or None if it is not there."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return None
    for i, word in enumerate(words):
        if word == program or word.endswith("/" + program):
            args = []
            for w in words[i + 1:]:
                if w in SHELL_OPERATORS or w.startswith((">", "2>")):
                    break
                args.append(w)
            return args
    return None


# the deploy recipes, the README and every page of the documentation site
DOC_FILES = sorted(DEPLOY.rglob("README.md")) + [ROOT / "README.md",
                                                 DOCKER / "docker-compose.yml",
                                                 DOCKER / "Dockerfile",
                                                 K8S / "dlinear-cluster.yaml",
                                                 K8S / "s3-secret.yaml",
                                                 K8S / "daskcluster.yaml"] + sorted(
    p for p in (ROOT / "docs").rglob("*.rst") if "_build" not in p.parts
    and "generated" not in p.parts)


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_documented_commands_take_valid_options(path):
    from dlinear.cli import jobs as cli_jobs
    slurm = _load(SLURM / "slurm_cluster.py", "slurm_cluster")
    checked = 0
    for command in _shell_commands(path):
        args = _arguments_after(command, "dlinear-train")
        if args is not None:
            params, opts, train_file, model_file = parse_train_args(args)
            dlinear.params.check_parameter(params)
            checked += 1
        args = _arguments_after(command, "dlinear-submit")
        if args is not None:
            cli_jobs.parse_submit_args(args)
            checked += 1
        args = _arguments_after(command, "dlinear-status")
        if args is not None:
            cli_jobs.build_parser().parse_args(args)
            checked += 1
        args = _arguments_after(command, "slurm_cluster.py")
        if args is not None:
            slurm.parse_args(args)
            checked += 1
    if path.name == "README.md" or path.name == "docker-compose.yml":
        assert checked, f"no dlinear-train, dlinear-submit or slurm_cluster.py command in {path}"
