"""The scheduler behind scripts/test: which tox environments run, in what order, how many at once.

Run by scripts/test with the tool environment's Python (the one that has tox), after it found the
interpreters. Standard library only. Three phases:

1. choose: each configuration's environments (its envlist, or the ones asked for with -e), with
   its pyXY environments fitted to the interpreters found (see ``fit_versions``);
2. build: every environment is made one at a time (``tox run --notest -e ENV``), the longest
   first: two builds at once would build the editable core in the same tree;
3. test: each environment built joins one pool of ALL configurations' environments, which runs
   ``--jobs`` at a time, the longest first (durations of the last run are kept in each
   configuration's ``.tox/.dsh-durations.json``), each one's output printed whole when it
   ends, pass or fail. The end lists each build's and each test run's wall time.

With ``--jobs 1`` each configuration is one plain ``tox run`` with its output live.
One SIGINT or SIGTERM stops the run: each running tox is interrupted (pytest tears its fixtures
down), whatever it left running is ended, no further environment starts; exit 130 (143).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY_ENV = re.compile(r"^py(3)(\d+)$")
# Before any duration is known (a fresh clone, as CI always is): each environment's seconds in
# a full run on an idle 2-CPU machine, 3 at a time (the default there), so that the longest
# start first and no long one is left for the end; "core py" stands for each of the core's
# pyXY environments. Its own runs then replace them.
FIRST_GUESS = {
    "inbox e2e": 575,
    "core e2e": 563,
    "core installs": 402,
    "terminal e2e": 341,
    "web e2e": 180,
    "core py": 130,
    "inbox py": 127,
    "web py": 125,
    "core frameworks": 123,
    "core type": 96,
    "core durable": 66,
    "terminal py": 20,
    "core docs": 12,
}
GRACE_SECONDS = 30  # how long an interrupted tox may take to tear its fixtures down


def say(text: str) -> None:
    print(f"scripts/test: {text}", file=sys.stderr, flush=True)


@dataclass
class Job:
    config: str  # "tox.ini" or "providers/web/tox.ini"
    env: str
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    started: float = 0.0
    seconds: float = 0.0
    status: int | None = None

    @property
    def name(self) -> str:
        return f"{self.config} {self.env}"

    def guess(self, history: dict[str, float]) -> float:
        if self.name in history:
            return history[self.name]
        owner = Path(self.config).parent.name or "core"
        kind = "py" if PY_ENV.match(self.env) else self.env
        return FIRST_GUESS.get(f"{owner} {kind}", 60.0)


@dataclass
class Run:
    tox: list[str]
    skip_missing: str
    rest: list[str]
    jobs: int
    failed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    running: list[Job] = field(default_factory=list)
    interrupted: int = 0  # the signal number
    signals: int = 0
    timed: list[Job] = field(default_factory=list)  # every build and test, for the end
    started: float = field(default_factory=time.monotonic)

    def on_signal(self, signum: int, _frame: object) -> None:
        self.interrupted = signum
        self.signals += 1


def tox_envlist(tox: list[str], config: str) -> list[str]:
    listed = subprocess.run(
        [*tox, "list", "-d", "--no-desc", "-q", "-c", config],  # -d: the envlist only
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return [line.strip() for line in listed.stdout.splitlines() if line.strip()]


def fit_versions(envs: list[str], found: list[str], ci: bool) -> list[str]:
    """A configuration's default environments fitted to the interpreters found.

    With CI=true the envlist stays as written (a missing interpreter fails the run). Otherwise
    the pyXY environments are those of the envlist whose interpreter was found; the core
    (whose envlist names every version) thus grows and shrinks with what is installed, and a
    configuration none of whose versions is found runs on the newest one found, so that every
    configuration runs on a machine with a single Python.
    """
    if ci:
        return envs
    versions = [e for e in envs if PY_ENV.match(e)]
    found_envs = ["py" + v.replace(".", "") for v in found]
    kept = [e for e in versions if e in found_envs]
    if versions and not kept and found_envs:
        kept = [found_envs[-1]]
    first = envs.index(versions[0]) if versions else 0
    others = [e for e in envs if e not in versions]
    return others[:first] + kept + others[first:]


def choose(
    tox: list[str], configs: list[str], requested: list[str], found: list[str], ci: bool
) -> dict[str, list[str]]:
    chosen: dict[str, list[str]] = {}
    used: set[str] = set()
    for config in configs:
        known = tox_envlist(tox, config) if requested or not ci else []
        if requested:
            picked = [n for n in requested if n in known or PY_ENV.match(n)]
            used.update(picked)
        else:
            picked = fit_versions(known, found, ci) if not ci else []
        chosen[config] = picked
    for name in requested:
        if name not in used:
            say(f"ERROR: no tox configuration has an environment '{name}'")
            sys.exit(2)
    return chosen


def history_file(config: str) -> Path:
    return ROOT / Path(config).parent / ".tox" / ".dsh-durations.json"


def load_history(configs: list[str]) -> dict[str, float]:
    history: dict[str, float] = {}
    for config in configs:
        try:
            saved = json.loads(history_file(config).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        history.update({f"{config} {env}": float(s) for env, s in saved.items()})
    return history


def save_history(jobs: list[Job]) -> None:
    for config in {job.config for job in jobs}:
        path = history_file(config)
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            saved = {}
        saved.update(
            {j.env: round(j.seconds, 1) for j in jobs if j.config == config and j.status == 0}
        )
        if path.parent.is_dir():
            path.write_text(json.dumps(saved, indent=1, sort_keys=True), encoding="utf-8")


def env_args(run: Run, envs: list[str]) -> list[str]:
    return ["-e", ",".join(envs)] if envs else []


def start(run: Run, args: list[str], log: Path | None) -> subprocess.Popen[bytes]:
    """tox in a session of its own (so all it starts can be ended), SIGINT at its default."""
    out = log.open("wb") if log else None
    try:
        return subprocess.Popen(
            [*run.tox, *args],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT if out else None,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    finally:
        if out:
            out.close()


def end_group(process: subprocess.Popen[bytes]) -> None:
    """End what is left of the process group of ``process`` (tox, pytest, servers)."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 0.0)):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


def stop_all(run: Run) -> None:
    names = ", ".join(job.name for job in run.running) or "the run"
    say("interrupted: stopping tox and what it started; no further environment runs")
    for job in run.running:
        if job.process and job.process.poll() is None:
            job.process.send_signal(signal.SIGINT)  # tox hands it to pytest, which tears down
    seen = run.signals
    deadline = time.monotonic() + GRACE_SECONDS
    while time.monotonic() < deadline and run.signals == seen:
        if all(job.process is None or job.process.poll() is not None for job in run.running):
            break
        time.sleep(0.1)
    for job in run.running:
        if job.process:
            end_group(job.process)
            job.process.wait()
            print_job(job, "interrupted")
    say(f"INTERRUPTED during {names}: not every environment ran")
    sys.exit(143 if run.interrupted == signal.SIGTERM else 130)


def wait_plain(run: Run, process: subprocess.Popen[bytes]) -> int:
    while True:
        try:
            status = process.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            status = None
        if run.interrupted:
            stop_all(run)
        if status is not None:
            end_group(process)  # whatever tox left running
            return status


def print_job(job: Job, verdict: str) -> None:
    say(f"=== {job.name}: {verdict} ({job.seconds:.0f} s)")
    if job.log and job.log.exists():
        sys.stderr.flush()
        sys.stdout.buffer.write(job.log.read_bytes())
        sys.stdout.flush()
        job.log.unlink()


def run_serial(run: Run, chosen: dict[str, list[str]]) -> None:
    for config, envs in chosen.items():
        say(f"=== tox -c {config} {' '.join(env_args(run, envs))}")
        job = Job(config, ",".join(envs) or "(envlist)", started=time.monotonic())
        run.running = [job]
        job.process = start(
            run, ["run", "-c", config, *skip(run), *env_args(run, envs), *run.rest], None
        )
        job.status = wait_plain(run, job.process)
        job.seconds = time.monotonic() - job.started
        run.timed.append(job)
        if job.status != 0:
            run.failed.append(config)


def skip(run: Run) -> list[str]:
    return ["--skip-missing-interpreters", run.skip_missing]


def skipped_for_its_interpreter(run: Run, job: Job) -> bool:
    """tox skipped the environment (its basepython is missing, and missing interpreters may be
    skipped): tox then exits 1, as for any run whose every environment was skipped."""
    if run.skip_missing != "true" or job.log is None or not job.log.exists():
        return False
    text = job.log.read_text(encoding="utf-8", errors="replace")
    return f"{job.env}: skipped because could not find python interpreter" in text


def run_pool(run: Run, chosen: dict[str, list[str]]) -> None:
    """Build the environments one at a time, the longest first, while those already built run
    their tests, ``run.jobs`` at a time, the longest first.

    Each environment is built by a tox run of its own (``--notest -e ENV``), so its tests can
    start as soon as it is ready: a configuration's slow builds (the frameworks' 400 MB) no
    longer hold back the tests of its environments built before them.
    """
    history = load_history(list(chosen))
    to_build = [
        Job(config, env)
        for config, envs in chosen.items()
        for env in (envs or tox_envlist(run.tox, config))
    ]
    to_build.sort(key=lambda job: -job.guess(history))  # stable: ties keep their order
    builder: Job | None = None
    pending: list[Job] = []
    finished: list[Job] = []
    logs = Path(tempfile.mkdtemp(prefix="dsh-test-"))
    run.running = []
    count = 0
    while to_build or builder or pending or run.running:
        if run.interrupted:
            if builder:
                run.running.append(builder)
            stop_all(run)
        if builder is None and to_build:
            builder = to_build.pop(0)
            count += 1
            builder.log = logs / f"{count}.log"
            builder.started = time.monotonic()
            say(f"--- building {builder.name}")
            args = ["run", "-c", builder.config, "--notest", *skip(run), "-e", builder.env]
            builder.process = start(run, args, builder.log)
        if builder and builder.process and (status := builder.process.poll()) is not None:
            end_group(builder.process)
            built = Job(builder.config, f"{builder.env} (building)", log=builder.log)
            built.seconds = time.monotonic() - builder.started
            built.status = status
            run.timed.append(built)
            if status == 0:
                say(f"=== {builder.name}: built ({built.seconds:.0f} s)")
                if builder.log:
                    builder.log.unlink()
                pending.append(Job(builder.config, builder.env))
                pending.sort(key=lambda job: -job.guess(history))
            elif skipped_for_its_interpreter(run, builder):
                print_job(built, "SKIPPED (its interpreter is not installed)")
                run.skipped.append(builder.name)
            else:
                print_job(built, f"FAILED to build (exit {status})")
                run.failed.append(built.name)
            builder = None
        while pending and len(run.running) < run.jobs:
            job = pending.pop(0)
            count += 1
            job.log = logs / f"{count}.log"
            job.started = time.monotonic()
            say(f"--- started {job.name}")
            args = ["run", "-c", job.config, "-e", job.env, "--skip-env-install", *skip(run)]
            job.process = start(run, [*args, *run.rest], job.log)
            run.running.append(job)
        time.sleep(0.2)
        for job in list(run.running):
            assert job.process is not None
            status = job.process.poll()
            if status is None:
                continue
            end_group(job.process)
            job.status = status
            job.seconds = time.monotonic() - job.started
            run.running.remove(job)
            finished.append(job)
            run.timed.append(job)
            if status != 0 and skipped_for_its_interpreter(run, job):
                print_job(job, "SKIPPED (its interpreter is not installed)")
                run.skipped.append(job.name)
                continue
            print_job(job, "passed" if status == 0 else f"FAILED (exit {status})")
            if status != 0:
                run.failed.append(job.name)
    save_history(finished)
    with contextlib.suppress(OSError):
        logs.rmdir()


def stamp_envs() -> None:
    """Each environment holding the editable core remembers the packaging metadata it was
    built with (scripts/test remakes it when that changes)."""
    metadata = os.environ.get("DSH_CORE_METADATA")
    if not metadata:
        return
    for pth in ROOT.glob(
        "**/.tox/*/lib/python*/site-packages/__editable__.dsh_user_questions-*.pth"
    ):
        env = pth.parents[3]
        stamp = env / ".dsh-core-metadata"
        if not env.name.startswith(".") and not stamp.exists():
            stamp.write_text(metadata + "\n", encoding="utf-8")


def say_reruns() -> None:
    log = os.environ.get("DSH_RERUN_LOG")
    if not log:
        return
    total = 0
    retried: list[str] = []
    with contextlib.suppress(OSError):
        for line in Path(log).read_text(encoding="utf-8").splitlines():
            if line.startswith("retried\t"):
                _, where, what = line.split("\t", 2)
                with contextlib.suppress(ValueError):
                    where = Path(where).relative_to(ROOT).as_posix()
                retried.append(f"retried in {where}: {what}")
                continue
            with contextlib.suppress(ValueError, IndexError):
                total += int(line.split()[0])
        os.unlink(log)
    say(f"reruns: {total} (only the tests the [pytest] settings name are retried, up to twice)")
    for line in retried:  # which test, and the last line of why its try failed
        say(f"  {line}")


def say_times(run: Run) -> None:
    """Each build's and each environment's wall time, longest first, then the whole run's."""
    if not run.timed:
        return
    say(
        "wall time of each step, longest first (the builds one after another; the tests"
        f" {run.jobs} at a time, so the steps add up to more than the whole run):"
    )
    for job in sorted(run.timed, key=lambda j: -j.seconds):
        verdict = ""
        if job.name in run.skipped:
            verdict = "  (skipped)"
        elif job.status not in (0, None):
            verdict = "  (failed)"
        say(f"  {job.seconds:6.0f} s  {job.name}{verdict}")
    whole = time.monotonic() - run.started
    say(f"  {whole:6.0f} s  the whole run ({whole / 60:.1f} min)")


def default_jobs() -> int:
    """One environment more than the CPUs, at most 4: the end-to-end environments spend much of
    their time waiting on browsers, servers and subprocesses (on 2 CPUs, 3 at a time took a
    full run from 24.0 to 19.8 min; more than 4 at once was never measured)."""
    return min((os.cpu_count() or 1) + 1, 4)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=default_jobs())
    parser.add_argument("--ci", action="store_true")
    parser.add_argument("--found", default="")
    parser.add_argument("--missing", default="")
    parser.add_argument("--env", action="append", default=[])
    parser.add_argument("--warning", action="append", default=[])
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    args.env = [name for value in args.env for name in value.split(",") if name]
    rest = argv[cut + 1 :]  # for tox, as given to scripts/test (pytest's arguments after its --)
    found = [v for v in args.found.split() if v]
    configs = [
        "tox.ini",
        *sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("providers/*/tox.ini")),
    ]
    run = Run(
        tox=[sys.executable, "-m", "tox"],
        skip_missing="false" if args.ci else "true",
        rest=rest,
        jobs=args.jobs,
    )
    signal.signal(signal.SIGINT, run.on_signal)
    signal.signal(signal.SIGTERM, run.on_signal)
    for line in args.warning:
        say(f"!!! {line}")
    chosen = choose(run.tox, configs, args.env, found, args.ci)
    for config in configs:
        if args.env and not chosen[config]:
            say(f"=== {config}: skipped, it has none of: {' '.join(args.env)}")
            del chosen[config]
    try:
        if run.jobs == 1:
            run_serial(run, chosen)
        else:
            run_pool(run, chosen)
    finally:
        stamp_envs()
        print(file=sys.stderr)
        say_times(run)
        for line in args.warning:
            say(f"!!! {line}")
        say_reruns()
    missing = f"; not found: {args.missing}" if args.missing else ""
    if run.skipped:
        say("SKIPPED (no interpreter for them here): " + "; ".join(run.skipped))
    if run.failed:
        say("FAILED: " + "; ".join(run.failed))
        say(f"CPython found: {args.found or 'none'}{missing}")
        sys.exit(1)
    say(f"all configurations passed on CPython {args.found or 'none'}{missing}")


if __name__ == "__main__":
    main()
