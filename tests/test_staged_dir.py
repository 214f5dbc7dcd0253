"""A staging folder (dlbench.core.storage.atomic.staged_dir) never outlives its block: not after a
failure, and not after a stop that arrives while the folder is being made - the window
where CI once found an import's `.import-*` folder left behind by Ctrl-C."""

from __future__ import annotations

import os
import signal

import pytest

from dlbench.core.storage import atomic


def test_a_stop_arriving_as_the_folder_is_made_is_raised_inside_and_leaves_nothing(
        tmp_path, monkeypatch):
    made = atomic.new_dir

    def stopped_right_after_mkdir(parent, prefix):
        folder = made(parent, prefix)
        os.kill(os.getpid(), signal.SIGINT)  # unheld, this raises before the caller has it
        return folder

    monkeypatch.setattr(atomic, "new_dir", stopped_right_after_mkdir)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C as a CLI has it
    try:
        with pytest.raises(KeyboardInterrupt):
            with atomic.staged_dir(tmp_path, ".stage-"):
                pass
        assert list(tmp_path.iterdir()) == []
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # given back
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_failing_block_leaves_nothing_and_a_renamed_folder_stays_where_it_went(tmp_path):
    with pytest.raises(ValueError):
        with atomic.staged_dir(tmp_path, ".stage-") as staging:
            (staging / "half").write_text("x")
            raise ValueError("failed half way")
    assert list(tmp_path.iterdir()) == []
    with atomic.staged_dir(tmp_path, ".stage-") as staging:
        (staging / "whole").write_text("x")
        staging.rename(tmp_path / "done")
    assert [p.name for p in tmp_path.iterdir()] == ["done"]
    assert (tmp_path / "done" / "whole").read_text() == "x"
