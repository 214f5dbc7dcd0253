"""The `dlbench` command: parse arguments, then call a function that tests can call too.

The CLI is the only top: it alone imports runner/ and report/, and nothing imports it.
Measuring (runner/) and presenting (report/) are imported only by the subcommand that
needs them, so `dlbench run` never loads altair and `dlbench build` never loads a framework.
argparse stops here: the parsed flags become the typed values runner/ and report/ take
(run_flags.py, site_flags.py).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence

from dlbench.core.text.errors import LayoutError, ResultsFileError, SaveError, UsageError
from dlbench.cli.signals import terminate_as_interrupt
from dlbench.core.text.visible import visible_controls


def _run(args: argparse.Namespace) -> int:
    from dlbench.cli.run_flags import check_run_paths, run_arguments
    from dlbench.runner.driver.commands.run import executor_of, run_command

    arguments = run_arguments(args)
    check_run_paths(args)
    if args.dry_run:
        from dlbench.runner.driver.commands.dry_run import dry_run_command

        return dry_run_command(arguments)
    if arguments.model or arguments.resume:
        from dlbench.runner.driver.commands.run_model import resumes_a_model_run, run_model_command

        if resumes_a_model_run(arguments):
            return run_model_command(arguments)
    if executor_of(arguments) != "ray":
        return run_command(arguments)
    from dlbench.runner.driver.cluster import require_ray

    require_ray()
    from dlbench.runner.driver.cluster.executor import measure_on_cluster

    return run_command(arguments, measure_on_cluster)


def _later(module: str, function: str) -> Callable[[argparse.Namespace], int]:
    """A handler that imports the CLI's `module` only when its command runs."""
    def handler(args: argparse.Namespace) -> int:
        return getattr(importlib.import_module(f"dlbench.cli.{module}"), function)(args)

    return handler


def _site(name: str) -> Callable[[argparse.Namespace], int]:
    """A handler that imports the site's command `name` only when it runs, and calls it with
    the typed request made of the parsed flags."""
    def handler(args: argparse.Namespace) -> int:
        from dlbench.cli.site_flags import SITE_REQUESTS
        from dlbench.report.site import commands

        return getattr(commands, f"{name}_command")(SITE_REQUESTS[name](args))

    return handler


def _add_site_commands(commands: argparse._SubParsersAction) -> None:
    """build, publish, deploy, erratum, export and serve: the comparison site (report/)."""
    def site_options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--results-dir", default="results", help="where results/ lives")
        parser.add_argument("--out", default="site_src", help="generated Markdown goes here")
        parser.add_argument("--templates", default=None,
                            help="page templates (default: the project's, installed with it)")
        parser.add_argument("--config", default=None,
                            help="the mkdocs config (default: the project's mkdocs.yml)")
        parser.add_argument("--cache-dir", default="build/cache",
                            help="charts and pages of earlier builds, reused when unchanged")

    def pages_option(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--pages-repo", default="build/pages",
                            help="git repository holding the versioned site (branch gh-pages)")

    build = commands.add_parser("build", help="render a release (or a draft of runs) into "
                                "site_src/")
    build.add_argument("--release", default=None, help="a frozen release (default: newest)")
    build.add_argument("--run", action="append", default=[], metavar="RUN_ID",
                       help="build a draft from this run instead ('latest' works; repeatable)")
    site_options(build)
    build.set_defaults(handler=_site("build"))

    publish = commands.add_parser("publish", help="freeze runs as a release and deploy it")
    publish.add_argument("release", metavar="RELEASE", help="new release name, e.g. 2026.12")
    publish.add_argument("--run", action="append", default=[], metavar="RUN_ID", required=True,
                         help="a run to include ('latest' works; repeatable)")
    publish.add_argument("--title", default="", help="a title for the release")
    publish.add_argument("--date", default="", help="release date YYYY-MM-DD (default today)")
    publish.add_argument("--notes", default="", metavar="FILE",
                         help="Markdown: what changed since the previous release (shown on "
                              "the release's home page)")
    publish.add_argument("--site-url", default="", metavar="URL",
                         help="the address the site is published at, recorded in the release "
                         "and its citations (default: mkdocs.yml's site_url)")
    publish.add_argument("--local", action="store_true",
                         help="a release served on this machine only: allowed while site_url "
                         "is the placeholder, and its citation says it is local")
    publish.add_argument("--preview", action="store_true",
                         help="allow a quick-suite run: the release is labelled not citable")
    site_options(publish)
    pages_option(publish)
    publish.set_defaults(handler=_site("publish"))

    deploy = commands.add_parser("deploy", help="(re)deploy frozen releases as site versions")
    deploy.add_argument("releases", nargs="*", metavar="RELEASE", help="default: all")
    site_options(deploy)
    pages_option(deploy)
    deploy.set_defaults(handler=_site("deploy"))

    erratum = commands.add_parser(
        "erratum", help="append what is known to be wrong with a release to its errata")
    erratum.add_argument("release", metavar="RELEASE", help="a published release, e.g. 2026.12")
    erratum.add_argument("--title", required=True, help="the problem in a few words")
    erratum.add_argument("--wrong", required=True, help="what is wrong with its numbers")
    erratum.add_argument("--correction", required=True, help="how it is corrected, and where")
    erratum.add_argument("--superseded-by", default="", metavar="RELEASE",
                         help="the published release that supersedes this one")
    erratum.add_argument("--date", default="", help="when it was found, YYYY-MM-DD (today)")
    erratum.add_argument("--results-dir", default="results", help="where results/ lives")
    erratum.set_defaults(handler=_site("erratum"))

    export = commands.add_parser("export", help="write the versioned site as plain files")
    export.add_argument("dir", metavar="DIR")
    pages_option(export)
    export.set_defaults(handler=_site("export"))

    serve = commands.add_parser("serve", help="serve the versioned site on localhost")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--site", default=None, metavar="DIR",
                       help="serve this already built site (e.g. site/ of `make site`) as it is")
    site_options(serve)
    pages_option(serve)
    serve.set_defaults(handler=_site("serve"))


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="dlbench",
        description="Measure PyTorch, TensorFlow and Keras side by side and publish the results.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_run_command(commands)
    _add_inspect_commands(commands)
    _add_reproduce_command(commands)
    _add_run_file_commands(commands)
    _add_site_commands(commands)
    return parser


def _add_run_command(commands: argparse._SubParsersAction) -> None:
    """`dlbench run`: measure a suite, a plan or a user's model."""
    run = commands.add_parser("run", help="run a suite of experiments on this machine")
    run.add_argument("--suite", default="quick", help="quick | standard | machine | full")
    run.add_argument("--dry-run", action="store_true",
                     help="print the cells and the expected minutes; measure nothing")
    run.add_argument("--experiment", action="append", default=[], metavar="E",
                     help="only this experiment (repeatable)")
    run.add_argument("--workload", action="append", default=[], metavar="W",
                     help="only this workload (repeatable)")
    run.add_argument("--framework", action="append", default=[], metavar="F",
                     help="only this framework, e.g. pytorch, keras, keras-torch (repeatable)")
    run.add_argument("--device", default="auto", help="auto | cpu | cuda")
    run.add_argument("--repeats", type=int, default=None,
                     help="worker processes per cell (default: the suite's)")
    run.add_argument("--threads", type=int, default=None,
                     help="threads for every framework (default: all cores)")
    run.add_argument("--timeout", type=float, default=None, help="seconds allowed per cell")
    run.add_argument("--data-dir", default="", help="folder with mnist.npz or CIFAR-10 batches")
    run.add_argument("--resume", default=None, metavar="RUN_ID", help="finish an earlier run")
    run.add_argument("--results-dir", default="results", help="where results/ lives")
    run.add_argument("--no-progress", action="store_true", help="plain log lines, no bar")
    run.add_argument("--remeasure", default=None, metavar="RUN_ID",
                     help="measure --cell cells of an earlier run again (old processes kept as "
                     "superseded)")
    run.add_argument("--cell", action="append", default=[], metavar="CELL_ID",
                     help="a cell to re-measure (with --remeasure; repeatable)")
    run.add_argument("--reason", default="", help="why the cells are re-measured")
    run.add_argument("--busy-retries", type=int, default=None, metavar="N",
                     help="re-runs of a process measured on a busy machine (default 2)")
    run.add_argument("--seed", type=int, default=None,
                     help="seed of the interleaved process order (default: random, recorded)")
    run.add_argument("--plan", default=None, metavar="FILE",
                     help="measure a device plan's cells (e.g. scripts/gpu_plan.json) as one "
                     "run; --experiment, --workload, --framework and --repeats are its steps'")
    run.add_argument("--executor", choices=("local", "ray"), default=None,
                     help="local (default): this machine; ray: the nodes of a Ray cluster")
    run.add_argument("--address", default=None, metavar="ADDR",
                     help="the Ray cluster's head, HOST:PORT (default: RAY_ADDRESS or local)")
    run.add_argument("--machine-kind", action="append", default=[], metavar="KIND",
                     help="measure on nodes of this kind (repeatable; default: every kind)")
    run.add_argument("--model", default="", metavar="PATH.py:NAME",
                     help="measure your own model: NAME in PATH.py builds and returns a Keras 3 "
                          "model or a torch.nn.Module (or PATH.keras)")
    run.add_argument("--input-shape", default="", metavar="SHAPE",
                     help="with --model: one sample's shape, e.g. 28,28,1 (generated inputs)")
    run.add_argument("--input-dtype", default="float32", metavar="DTYPE",
                     help="with --input-shape: float32 | float16 | int32 | int64")
    run.add_argument("--data", default="", metavar="FILE.npz",
                     help="with --model: your inputs (x) and targets (y) in place of --input-shape")
    run.add_argument("--batch-size", type=int, default=None, metavar="N",
                     help="with --model: throughput and training batch (default: chosen so one "
                          "call takes about 0.1 s)")
    run.add_argument("--steps", type=int, default=None, metavar="N",
                     help="with --model: timed batch-1 calls and training steps per process "
                          "(default: the suite's)")
    run.set_defaults(handler=_run)


def _add_inspect_commands(commands: argparse._SubParsersAction) -> None:
    """`dlbench list`, `results show|history` and `compare`: read what was measured."""
    listing = commands.add_parser("list", help="experiments, workloads, frameworks, suites")
    listing.set_defaults(handler=_later("listing", "list_command"))

    results = commands.add_parser("results", help="inspect recorded runs")
    results_commands = results.add_subparsers(dest="results_command", required=True)
    show = results_commands.add_parser("show", help="summary of one run")
    show.add_argument("run_id", metavar="RUN_ID", help="a run ID, or latest")
    show.add_argument("--results-dir", default="results")
    show.set_defaults(handler=_later("show", "show_command"))
    past = results_commands.add_parser("history", help="one cell's result IDs and values in "
                                       "every release")
    past.add_argument("cell_id", metavar="CELL_ID",
                      help="e.g. training:mlp-digits:pytorch:fp32-default-b32:cpu")
    past.add_argument("--results-dir", default="results")
    past.set_defaults(handler=_later("history_output", "history_command"))
    facts = results_commands.add_parser(
        "facts", help="a release's factual figures computed from its data (busy re-measures, "
        "decided shares, bounds, slowdowns between machines); --check reads its notes against "
        "them")
    facts.add_argument("release", metavar="RELEASE", help="a release name, e.g. 2027.04")
    facts.add_argument("--check", action="store_true",
                       help="also read the release's notes against the figures (exit 1 where "
                            "the data contradict one)")
    facts.add_argument("--results-dir", default="results")
    facts.set_defaults(handler=_later("facts_output", "facts_command"))

    comparing = commands.add_parser(
        "compare", help="what got faster or slower between two runs, releases or machines")
    comparing.add_argument("a", metavar="A", help="run ID, latest, release or RELEASE@RUN_ID")
    comparing.add_argument("b", metavar="B", help="run ID, latest, release or RELEASE@RUN_ID")
    comparing.add_argument("--metric", action="append", default=[], metavar="M",
                           help="only this metric (repeatable)")
    comparing.add_argument("--all", action="store_true",
                           help="list every row, not only significant changes")
    comparing.add_argument("--across-machines", action="store_true",
                           help="call changes faster/slower although A and B ran on different "
                                "machines (CPU/GPU model or measured peak)")
    comparing.add_argument("--format", default="table",
                           help="table (default, 80 columns) | csv | json | markdown")
    comparing.add_argument("--results-dir", default="results")
    comparing.set_defaults(handler=_later("compare_output", "compare_command"))


def _add_reproduce_command(commands: argparse._SubParsersAction) -> None:
    """`dlbench reproduce`: rerun a published result here."""
    again = commands.add_parser(
        "reproduce", help="rerun a published result, or a ratio of two, here and check it "
                          "against its interval")
    again.add_argument("result_id", metavar="RESULT_ID", help="e.g. 2026.12-0007")
    again.add_argument("other_id", metavar="OTHER_ID", nargs="?", default=None,
                       help="a second result of the same release and metric: reproduce their "
                            "ratio, both cells rerun interleaved")
    again.add_argument("--ratio", action="store_true",
                       help="reproduce RESULT_ID as its ratio to a reference cell of its run "
                            "(PyTorch's, else another system's), measured side by side")
    again.add_argument("--processes", type=int, default=3,
                       help="processes per cell for a ratio (default 3)")
    again.add_argument("--seed", type=int, default=0, help="the interleaved order's seed")
    again.add_argument("--results-dir", default="results")
    again.set_defaults(handler=_later("reproduce_output", "reproduce_command"))


def _add_run_file_commands(commands: argparse._SubParsersAction) -> None:
    """`dlbench import-run`, `export-run` and `code`: a run's files, carried or read."""
    importing = commands.add_parser(
        "import-run", help="bring in a run archived on another machine (scripts/gpu_run.py)")
    importing.add_argument("archive", metavar="ARCHIVE", help="the run's .tar.gz")
    importing.add_argument("--results-dir", default="results", help="where results/ lives")
    importing.set_defaults(handler=_later("import_run", "import_command"))
    exporting = commands.add_parser(
        "export-run", help="pack a run of this machine as one archive to send (import-run "
                           "takes it)")
    exporting.add_argument("run", metavar="RUN", help="a run ID, or latest")
    exporting.add_argument("--results-dir", default="results", help="where results/ lives")
    exporting.add_argument("--out", default=".", help="the folder the archive goes into")
    exporting.set_defaults(handler=_later("export_run", "export_command"))
    code = commands.add_parser(
        "code", help="the code a result or a run ran, from its run's code record")
    code.add_argument("target", metavar="TARGET",
                      help="a result ID (e.g. 2027.03-0001), a run ID or latest, or "
                           "RELEASE@RUN_ID")
    code.add_argument("path", metavar="PATH", nargs="?", default="",
                      help="a project file it ran, e.g. runner/worker/harness/training.py (omit to "
                           "list them)")
    code.add_argument("--sha256", default="", metavar="HASH",
                      help="the version of PATH to print, where it ran several (a prefix works)")
    code.add_argument("--results-dir", default="results", help="where results/ lives")
    code.set_defaults(handler=_later("code_output", "code_command"))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        with terminate_as_interrupt(args.command):
            status = handler(args)
        sys.stdout.flush()  # a reader gone away shows here, not in the flush at exit
        return status
    except (UsageError, ResultsFileError, LayoutError, SaveError) as error:
        print(f"dlbench: error: {visible_controls(str(error))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as interrupt:  # its message, if any, says what to run next
        print("dlbench: interrupted" + (f": {interrupt}" if str(interrupt) else ""),
              file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`dlbench code latest | head -1`)
        reader_gone()
        return 0


def reader_gone() -> None:
    """Point stdout at /dev/null, so the interpreter's flush at exit finds no closed pipe
    (the recipe of Python's signal documentation)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
