#!/usr/bin/env python3
"""Plots ftpipe-run --eval-csv files: held-out loss and the task's metric over
wall time, one line per run (e.g. async against GPipe), to read off time to a
loss or an accuracy. The metric is the CSVs' token accuracy, or exact match
and F1 (models generated with ftpipe-model-gen --metrics), where every run
has it, else the perplexity.

plot-eval.py RUN.csv [RUN.csv ...] [--label NAME ...] -o PLOT.svg|PLOT.png

Writes SVG with the standard library alone; PNG needs matplotlib, which
scripts/reference-requirements.txt does not pin (`build/.venv-ref/bin/python
-m pip install matplotlib`, then run this script with that Python);
test/Reference/plot-eval-png.test runs where it is installed.
"""

import argparse
import csv
import sys

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]


# The metric columns an --eval-csv may have, with their titles.
METRICS = [("token_accuracy", "token accuracy"), ("exact_match", "exact match"),
           ("f1", "F1")]


def read_run(path):
    """The run's rows, each a dict of column -> float."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or not {"seconds", "loss", "perplexity"} <= set(rows[0]):
        sys.exit("plot-eval: %s: not an ftpipe-run --eval-csv file" % path)
    return [{k: float(v) for k, v in r.items()} for r in rows]


def panels_of(runs):
    """(column, title) of each panel: the loss, then the metrics every run
    has, else the perplexity."""
    metrics = [(c, t) for c, t in METRICS if all(c in run[0] for run in runs)]
    return [("loss", "held-out loss")] + (metrics or
                                         [("perplexity", "perplexity")])


def svg_panel(runs, labels, column, title, x0, width, height):
    """One panel: axes, ticks at the ends, a polyline per run."""
    xs = [p["seconds"] for run in runs for p in run]
    ys = [p[column] for run in runs for p in run]
    xmax = max(xs) or 1.0
    ymin, ymax = min(ys), max(ys)
    if ymax == ymin:
        ymax = ymin + 1.0
    left, top, right, bottom = x0 + 60, 30, x0 + width - 10, height - 40

    def at(x, y):
        return (left + (right - left) * x / xmax,
                bottom - (bottom - top) * (y - ymin) / (ymax - ymin))
    out = ['<text x="%d" y="20" font-size="14">%s</text>' % (left, title),
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (
               left, bottom, right, bottom),
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (
               left, top, left, bottom),
           '<text x="%d" y="%d" font-size="11">0 s</text>' % (left, bottom + 15),
           '<text x="%d" y="%d" font-size="11" text-anchor="end">%.1f s</text>'
           % (right, bottom + 15, xmax),
           '<text x="%d" y="%d" font-size="11" text-anchor="end">%.4g</text>'
           % (left - 4, bottom, ymin),
           '<text x="%d" y="%d" font-size="11" text-anchor="end">%.4g</text>'
           % (left - 4, top + 8, ymax)]
    for i, (run, label) in enumerate(zip(runs, labels)):
        colour = COLOURS[i % len(COLOURS)]
        points = " ".join("%.1f,%.1f" % at(p["seconds"], p[column])
                          for p in run)
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" '
                   'points="%s"><title>%s</title></polyline>' % (
                       colour, points, label))
        out.append('<text x="%d" y="%d" font-size="11" fill="%s">%s</text>' % (
            right - 150, top + 14 * (i + 1), colour, label))
    return out


def write_svg(runs, labels, path):
    width, height = 480, 320
    panels = panels_of(runs)
    body = []
    for i, (column, title) in enumerate(panels):
        body += svg_panel(runs, labels, column, title + " over wall time",
                          i * width, width, height)
    with open(path, "w") as f:
        f.write('<svg xmlns="http://www.w3.org/2000/svg" width="%d" '
                'height="%d">\n%s\n</svg>\n' % (len(panels) * width, height,
                                                "\n".join(body)))


def write_png(runs, labels, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot-eval: PNG needs matplotlib, which is not installed; "
                 "write SVG (-o PLOT.svg) or install matplotlib")
    panels = panels_of(runs)
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3.5))
    for run, label in zip(runs, labels):
        for ax, (column, _) in zip(axes, panels):
            ax.plot([p["seconds"] for p in run], [p[column] for p in run],
                    label=label)
    for ax, (_, name) in zip(axes, panels):
        ax.set_xlabel("wall time (s)")
        ax.set_ylabel(name)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--label", action="append", default=[])
    parser.add_argument("-o", dest="output", required=True)
    opts = parser.parse_args()
    if opts.label and len(opts.label) != len(opts.runs):
        sys.exit("plot-eval: give one --label per run")
    labels = opts.label or opts.runs
    runs = [read_run(path) for path in opts.runs]
    if opts.output.endswith(".png"):
        write_png(runs, labels, opts.output)
    else:
        write_svg(runs, labels, opts.output)
    print("plot-eval: %s (%d runs)" % (opts.output, len(runs)))


if __name__ == "__main__":
    main()
