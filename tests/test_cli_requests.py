"""The CLI turns parsed flags into typed values: a value's defaults are its flags' defaults,
and every flag lands in its field."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlbench.cli import build_parser
from dlbench.cli.run_flags import run_arguments
from dlbench.cli.site_flags import SITE_REQUESTS
from dlbench.report.site.requests import (BuildRequest, DeployRequest, ErratumRequest, ExportRequest,
                                  PublishRequest, ServeRequest, SitePaths)
from dlbench.runner.driver.commands.run_arguments import RunArguments
from dlbench.runner.driver.plan.request import RunRequest


def parsed(*argv: str):
    return build_parser().parse_args(list(argv))


def test_a_bare_run_is_the_default_run_arguments():
    assert run_arguments(parsed("run")) == RunArguments()


def test_every_run_flag_lands_in_its_field():
    arguments = run_arguments(parsed(
        "run", "--suite", "standard", "--experiment", "training", "--workload", "mlp-digits",
        "--workload", "cnn-images", "--framework", "keras", "--device", "cpu", "--repeats",
        "4", "--threads", "2", "--timeout", "9.5", "--data-dir", "data", "--results-dir",
        "out", "--no-progress", "--remeasure", "latest", "--cell", "c1", "--reason", "why",
        "--busy-retries", "0", "--seed", "7", "--plan", "plan.json", "--executor", "ray",
        "--address", "head:6379", "--machine-kind", "a100"))
    assert arguments == RunArguments(
        request=RunRequest(suite="standard", experiments=["training"],
                           workloads=["mlp-digits", "cnn-images"], frameworks=["keras"],
                           device="cpu", repeats=4, threads=2, timeout_s=9.5, data_dir="data"),
        plan_file=Path("plan.json"), results_dir=Path("out"),
        progress=False, remeasure="latest", cells=("c1",), reason="why", busy_retries=0,
        seed=7, executor="ray", address="head:6379", machine_kinds=("a100",))


def test_resume_lands_in_its_field():
    assert run_arguments(parsed("run", "--resume", "latest")).resume == "latest"


@pytest.mark.parametrize(("argv", "expected"), [
    (["build"], BuildRequest()),
    (["deploy"], DeployRequest()),
    (["serve"], ServeRequest()),
    (["publish", "2027.03", "--run", "latest"], PublishRequest("2027.03", ("latest",))),
    (["erratum", "2027.03", "--title", "t", "--wrong", "w", "--correction", "c"],
     ErratumRequest("2027.03", "t", "w", "c")),
    (["export", "plain"], ExportRequest(Path("plain"))),
])
def test_a_site_command_with_only_its_required_flags_is_its_default_request(argv, expected):
    assert SITE_REQUESTS[argv[0]](parsed(*argv)) == expected


def test_every_site_path_flag_lands_in_its_field():
    paths = ["--results-dir", "r", "--out", "o", "--templates", "t", "--config", "c.yml",
             "--cache-dir", "k", "--pages-repo", "p"]
    request = SITE_REQUESTS["serve"](parsed("serve", "--port", "9", "--host", "h",
                                            "--site", "s", *paths))
    assert request == ServeRequest(9, "h", Path("s"), SitePaths(
        Path("r"), Path("o"), Path("t"), Path("c.yml"), Path("k"), Path("p")))


def test_every_publish_flag_lands_in_its_field():
    request = SITE_REQUESTS["publish"](parsed(
        "publish", "2027.03", "--run", "a", "--run", "b", "--title", "T", "--date",
        "2027-03-01", "--notes", "notes.md", "--local", "--preview"))
    assert request == PublishRequest("2027.03", ("a", "b"), "T", "2027-03-01",
                                     Path("notes.md"), local=True, preview=True)
    addressed = SITE_REQUESTS["publish"](parsed(
        "publish", "2027.03", "--run", "a", "--site-url", "https://bench.example.net/"))
    assert addressed.site_url == "https://bench.example.net/" and not addressed.local

