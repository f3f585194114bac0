#!/usr/bin/env python3
"""The side-by-side benchmark suite: graphc and its peers in one run, tables and plots.

Usage, on a GPU machine (the bench binary is prebuilt; see docs/benchmarks.md):
    python3 bench/suite.py [--bench-gpu build/bench/bench_gpu] [--repeat 30]
Offline, from the JSON lines of an earlier run:
    python3 bench/suite.py --render-only bench/results/2026-11-29-h200-run4.jsonl

A run times graphc (the bench binary, one process per workload so that a workload
it lacks or fails on costs only that workload) and then the peers (bench/peers.py)
on the same workloads, and appends every result as a JSON line (shared/WORKLOADS.md,
plus the "command" that produced it) to bench/results/<date>-<device>.jsonl as it
comes. Then it renders that file: docs/bench/results.md, one Markdown table per
workload (rows: cases; columns: systems and their variants; median ms and relative
error against a float64 reference; the fastest in bold; the issues' targets), and
one PNG bar chart per workload (log-scale time) beside it. The plots need
matplotlib; without it only the Markdown is written.
"""
import argparse
import collections
import datetime
import importlib.util
import json
import math
import os
import pathlib
import re
import shlex
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORKLOADS = ("W1", "W1b", "W2", "W3", "W4", "W5", "GP", "small-op")
TITLES = {
    "W1": "W1: EnKF update, d = N = 3000",
    "W1b": "W1b: the EnKF update as first written (uncentered covariances), d = N = 3000",
    "W2": "W2: EnKF in the ensemble regime, d = 16384, N = 128",
    "W3": "W3: elementwise chain relu(x*w + b) * sigmoid(x) + tanh(x - b)",
    "W4": "W4: layernorm, 8192 x 4096",
    "W5": "W5: batched SPD solves, S = X*X'/(2n) + 0.1*I",
    "GP": "GP log marginal likelihood logdet(X X' + I) + y' solve(X X' + I, y), n = 4096",
    "small-op": "Small-op latency: one x + y, synchronous",
}
# case: (target ms on an H200, where it was set)
TARGETS = {
    "enkf_d3000_f64": (4.5, "issue 6"),
    "enkf_d3000_f32": (4.0, "issue 6"),
    "enkf_d16384_n128_f64": (0.6, "issue 6"),
    "enkf_orig_d3000_f64": (4.15, "issue 28: 1.1x W1's 3.77 ms"),
    "chain_16m_f32": (0.075, "issue 6"),
    "layernorm_8192x4096_f32": (0.075, "issue 6"),
    "chain_1024_f32_sync": (0.008, "issue 7"),
    "chain_1024_f32_deferred_k100": (0.002, "issue 7"),
    "batched_spd_4096x32_f64": (0.1, "issue 7"),
    "batched_spd_512x128_f64": (0.3, "issue 7"),
}
ERROR_SLACK = 10  # a result counts as accurate within this factor of its row's smallest error


def log(message):
    print(f"suite.py: {message}", file=sys.stderr, flush=True)


def device_name():
    """The first GPU's name from nvidia-smi, or "unknown GPU"."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, check=True).stdout
        return out.splitlines()[0].strip()
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown GPU"


def default_results_file(device):
    """bench/results/<date>-<device slug>.jsonl, with -runN added if that file exists."""
    slug = re.sub(r"[^a-z0-9]+", "-", device.lower().replace("nvidia", "")).strip("-") or "gpu"
    stem = f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d}-{slug}"
    path, n = ROOT / "bench" / "results" / f"{stem}.jsonl", 1
    while path.exists():
        n += 1
        path = path.with_name(f"{stem}-run{n}.jsonl")
    return path


def run_and_record(argv, label, results):
    """Runs argv, appends each JSON line it prints to `results` (with "command": label)
    and passes anything else on to stderr."""
    log(f"running {label}")
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    except OSError as e:
        log(f"{label} not run: {e}")
        return
    for line in proc.stdout:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            sys.stderr.write(line)
            continue
        record["command"] = label
        results.write(json.dumps(record) + "\n")
        results.flush()
        log(f"{record['case']} {record['system']} ({record['variant']}): {record['median_ms']} ms")
    if proc.wait() != 0:
        log(f"{label} exited with status {proc.returncode}")


def run_suite(args, path):
    """graphc one workload at a time, then the peers, into the JSON lines file `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as results:
        for workload in args.workloads:
            argv = [str(args.bench_gpu), "--repeat", str(args.repeat), "--workloads", workload]
            run_and_record(argv, shlex.join([args.bench_gpu.name, *argv[1:]]), results)
        peers = ["bench/peers.py", "--repeat", str(args.peer_repeat), "--device", args.device,
                 "--workloads", ",".join(args.workloads)]
        run_and_record([sys.executable, str(ROOT / peers[0]), *peers[1:]],
                       shlex.join(["python3", *peers]), results)


# Rendering.

Column = collections.namedtuple("Column", "system variant")


def load(path):
    """The results of a JSON lines file, by workload, then case, then column, in the
    order they first appear (graphc's columns first); a later line for the same
    cell replaces an earlier one."""
    table = collections.defaultdict(lambda: collections.defaultdict(dict))
    columns = collections.defaultdict(list)
    for line in open(path):
        if not line.strip():
            continue
        r = json.loads(line)
        column = Column(r["system"], r["variant"])
        if column not in columns[r["workload"]]:
            columns[r["workload"]].append(column)
        table[r["workload"]][r["case"]][column] = r
    order = [w for w in WORKLOADS if w in table] + sorted(set(table) - set(WORKLOADS))
    for w in order:
        columns[w].sort(key=lambda c: (c.system != "graphc", c.system == "floor"))
    return [(w, table[w], columns[w]) for w in order]


def column_label(column):
    return f"{column.system}: {column.variant}"


def fastest_accurate(cells):
    """The fastest result among those whose error is within ERROR_SLACK of the most
    accurate one's (so that, say, a TF32 product does not win an f32 row). A floor
    (a record without an error, bench_gpu's copy of the same bytes) is no contender."""
    contenders = [r for r in cells.values() if "rel_err" in r]
    floor = min(r["rel_err"] for r in contenders)
    return min((r for r in contenders if r["rel_err"] <= ERROR_SLACK * floor),
               key=lambda r: r["median_ms"])


def render_table(rows, columns):
    """A Markdown table: a row per case, a column per system and variant, and the target."""
    lines = ["| case | " + " | ".join(column_label(c) for c in columns) + " | target |",
             "|---" * (len(columns) + 2) + "|"]
    for case, cells in rows.items():
        best = fastest_accurate(cells)
        texts = []
        for column in columns:
            r = cells.get(column)
            text = "" if r is None else f"{r['median_ms']:.3g}"
            if r is not None and "rel_err" in r:
                text += f" ({r['rel_err']:.1e})"
            texts.append(f"**{text}**" if r is best else text)
        target = f"<= {TARGETS[case][0]:g} ({TARGETS[case][1]})" if case in TARGETS else ""
        lines.append(f"| {case} | " + " | ".join(texts) + f" | {target} |")
    return "\n".join(lines)


def plot(workload, rows, columns, path):
    """A grouped bar chart of the median times (log scale), the targets as black marks."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = list(rows)
    width = min(0.8, 0.13 * len(columns)) / len(columns)
    fig, ax = plt.subplots(figsize=(2 + 1.6 * len(cases), 4), dpi=100)
    colors = plt.get_cmap("tab10" if len(columns) <= 10 else "tab20").colors
    for i, column in enumerate(columns):
        xs = [j + (i - (len(columns) - 1) / 2) * width for j, case in enumerate(cases)
              if column in rows[case]]
        ys = [rows[case][column]["median_ms"] for case in cases if column in rows[case]]
        ax.bar(xs, ys, width, label=column_label(column), color=colors[i % len(colors)])
    for j, case in enumerate(cases):
        if case in TARGETS:
            ax.hlines(TARGETS[case][0], j - 0.45, j + 0.45, colors="black", linestyles="--",
                      label="target" if j == min(k for k, c in enumerate(cases) if c in TARGETS)
                      else None)
    ax.set_yscale("log")
    lowest = min([TARGETS[c][0] for c in cases if c in TARGETS]
                 + [r["median_ms"] for cells in rows.values() for r in cells.values()])
    ax.set_ylim(bottom=10 ** math.floor(math.log10(lowest)))  # bars start at a decade
    ax.set_xlim(-0.6, len(cases) - 0.4)
    ax.set_ylabel("median ms (log scale)")
    ax.set_xticks(range(len(cases)), cases, fontsize=8, rotation=10, ha="right")
    ax.set_title(TITLES.get(workload, workload), fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)


def render(results_path, docs):
    """docs/results.md and one PNG per workload from the JSON lines file `results_path`."""
    docs.mkdir(parents=True, exist_ok=True)
    workloads = load(results_path)
    records = [r for _, rows, _ in workloads for cells in rows.values() for r in cells.values()]
    plots = importlib.util.find_spec("matplotlib") is not None
    if not plots:
        log("matplotlib is missing: no plots")
    source = os.path.relpath(results_path.resolve(), docs.resolve())
    out = ["# Benchmark results: graphc beside its peers", "",
           f"Generated by `bench/suite.py` from [{results_path.name}]({source}).",
           "Dates: " + ", ".join(sorted({r["date"] for r in records})) + "; devices: "
           + ", ".join(sorted({r["device"] for r in records})) + ". Commands:", ""]
    out += [f"- `{c}`" for c in sorted({r.get("command", "not recorded") for r in records})]
    out += ["", "Each cell: median milliseconds of host-timed calls that include the device "
            "synchronization (a deferred case: per call, K calls and one synchronization), "
            "after warm-up, inputs on the device; in parentheses the relative error against "
            "a float64 reference. Bold: the fastest in its row of those whose error is "
            f"within {ERROR_SLACK}x of the row's smallest. \"floor\": a device-to-device copy "
            "moving the bytes the case reads and writes, launched and timed the same way (no "
            "error: it computes nothing). Targets: from the issues named. "
            "Workloads and case names: shared/WORKLOADS.md."]
    for workload, rows, columns in workloads:
        out += ["", f"## {TITLES.get(workload, workload)}", "", render_table(rows, columns)]
        if plots:
            png = docs / f"{workload.lower()}.png"
            plot(workload, rows, columns, png)
            out += ["", f"![{workload}]({png.name})"]
    (docs / "results.md").write_text("\n".join(out) + "\n")
    log(f"wrote {docs / 'results.md'}" + (" and the plots" if plots else ""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench-gpu", type=pathlib.Path,
                        default=ROOT / "build" / "bench" / "bench_gpu",
                        help="graphc's prebuilt bench binary (default: %(default)s)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--repeat", type=int, default=30, help="timed runs per case, graphc")
    parser.add_argument("--peer-repeat", type=int, default=20, help="timed runs per case, peers")
    parser.add_argument("--output", type=pathlib.Path,
                        help="the JSON lines file (default: bench/results/<date>-<device>.jsonl)")
    parser.add_argument("--docs", type=pathlib.Path, default=ROOT / "docs" / "bench",
                        help="where results.md and the plots go (default: %(default)s)")
    parser.add_argument("--render-only", type=pathlib.Path, metavar="FILE",
                        help="render FILE's results and run nothing")
    args = parser.parse_args()
    if args.render_only:
        render(args.render_only, args.docs)
        return
    args.workloads = args.workloads.split(",")
    args.device = device_name()
    path = args.output or default_results_file(args.device)
    log(f"{args.device}: results to {path}")
    run_suite(args, path)
    render(path, args.docs)


if __name__ == "__main__":
    main()
