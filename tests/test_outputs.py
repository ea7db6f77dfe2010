"""The output guard and the lock on output folders, as functions (tests/test_bad_inputs.py runs them through
every command): what counts as an input, every refusal and its words, folders other tools own, and locks."""

from __future__ import annotations

import argparse
import os
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from queerbias.errors import QueerbiasError
from queerbias.outputs import (
    CORPUS,
    CRAWL,
    GIT,
    LOCK_FILE,
    MODEL,
    STUDY,
    TRAINER,
    TRAINING,
    OutputLock,
    folder_owner,
    input_paths,
    lock_file,
    output_path,
    path_arg,
    run_files,
    spec_arg,
)


def test_path_and_spec_arguments_refuse_an_empty_value(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert path_arg("~/out") == tmp_path / "out" and spec_arg(" x ") == " x "
    with pytest.raises(argparse.ArgumentTypeError, match="^an empty value names no file or folder; give a path$"):
        path_arg("  ")
    with pytest.raises(argparse.ArgumentTypeError, match="^an empty value names nothing; give a name or a path$"):
        spec_arg("")


def test_inputs_are_the_files_they_read_resolved_once_each(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("x\n")
    (tmp_path / "link.csv").symlink_to(pairs)
    (tmp_path / "model").mkdir()
    model = tmp_path / "model"
    assert input_paths("~/pairs.csv", f"{pairs}:test?by=group", tmp_path / "link.csv", model) == [pairs, model]
    # what an object the API takes was read from, whichever attribute holds it
    for name in ("source", "spec", "path", "base_path", "name_or_path"):
        assert input_paths(SimpleNamespace(**{name: "~/model"}), pairs) == [model, pairs], name
    assert input_paths(SimpleNamespace(path=42)) == []
    # a mapping gives its values, containers their items; names that are no path here, None and blanks give nothing
    assert input_paths({"pairs": [str(pairs)], "seed": 3, "model": ("gpt2", None)}, model) == [pairs, model]
    assert input_paths(None, "", "  ", "gpt2", pairs) == [pairs]
    assert input_paths(tmp_path / "missing.csv", "missing.csv:test") == []


def test_a_broken_link_is_an_input_where_it_lies(tmp_path):
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(QueerbiasError, match="contains the input"):
        output_path(tmp_path, [tmp_path / "dangling"])


@pytest.mark.parametrize(("value", "message"), [
    (None, "^--out must name a directory \\(an empty value would write into the current one\\)$"),
    (" ", "^--out must name a directory \\(an empty value would write into the current one\\)$"),
    (3, "^--out must name a directory, got int$"),
    (Path(""), "^--out must name a directory, got PosixPath\\('\\.'\\): Path\\(''\\) is Path\\('\\.'\\), the working folder "
               "itself, so an empty path would write into it; name the folder$"),
])
def test_an_output_must_be_a_path(value, message):
    with pytest.raises(QueerbiasError, match=message):
        output_path(value)


def test_each_refusal_names_the_option_the_path_and_the_input(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    (data / "pairs.csv").write_text("x\n")
    with pytest.raises(QueerbiasError, match="^--file must name a file \\(an empty value would write into the "
                                             "current one\\)$"):
        output_path("", option="--file", file=True)
    with pytest.raises(QueerbiasError, match="^-o data/pairs.csv is the input data/pairs.csv; writing there would "
                                             "destroy it; choose another file$"):
        output_path("data/pairs.csv", ["data/pairs.csv"], option="-o", file=True)
    with pytest.raises(QueerbiasError, match="^--out data contains the input data/pairs.csv; results written there "
                                             "could replace it; choose another folder$"):
        output_path("data", ["data/pairs.csv:test?by=group"])
    with pytest.raises(QueerbiasError, match=f"^--out {data}/sub lies inside the input folder data; results written "
                                             "there would change the input; choose a folder outside it$"):
        output_path(data / "sub", [data])
    with pytest.raises(QueerbiasError, match="^--out data is a directory; give the file to write$"):
        output_path("data", file=True)
    with pytest.raises(QueerbiasError, match="is the input"):
        output_path(data, [str(data)])
    # beside a file input, or in a sibling of an input folder: nothing is in the way
    assert output_path("data/out.csv", ["data/pairs.csv"], file=True) == Path("data/out.csv")
    assert output_path(tmp_path / "other", [data]) == tmp_path / "other"
    (tmp_path / "other").mkdir()  # an existing folder beside the inputs: neither is the other nor holds it
    assert output_path(tmp_path / "other", [data, data / "pairs.csv"]) == tmp_path / "other"
    elsewhere = tmp_path.parent / f"{tmp_path.name}-input.csv"
    elsewhere.write_text("x\n")
    with pytest.raises(QueerbiasError, match=f"^--out {elsewhere} is the input {elsewhere};"):
        output_path(elsewhere, [elsewhere], file=True)  # outside the working folder: shown absolute


def test_output_path_expands_the_home_folder_and_checks_the_parent_of_a_file(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert output_path("~/run/out.csv", file=True) == tmp_path / "run" / "out.csv"
    (tmp_path / "plain").write_text("x")
    with pytest.raises(QueerbiasError, match="^--file .*/plain: .*/plain is a file, not a directory$"):
        output_path("~/plain/out.csv", option="--file", file=True)
    with pytest.raises(QueerbiasError, match="plain is a file, not a directory$"):
        output_path("~/plain")  # a folder's own path is checked, not its parent's


@pytest.mark.parametrize(("names", "owner"), [
    (("study.yaml", "plan.json"), STUDY),
    (("config.yaml", "metrics.jsonl"), TRAINING),
    (("study-cell.yaml",), TRAINING),
    (("datasheet.md", "stats.json"), CORPUS),
    (("tombstones.json",), CRAWL),
    (("news.jsonl", "state.json"), CRAWL),
    ((".git",), GIT),
    (("trainer_state.json",), TRAINER),
    (("training_args.bin",), TRAINER),
    (("config.json",), MODEL),
    (("adapter_config.json",), MODEL),
    (("model.safetensors",), MODEL),
    (("pytorch_model.bin",), MODEL),
])
def test_folders_other_tools_own_are_known_by_all_their_files(tmp_path, names, owner):
    for name in names:
        (tmp_path / name).write_text("x")
    assert folder_owner(tmp_path) == (owner, tmp_path / names[0])
    with pytest.raises(QueerbiasError, match=f"^--out {tmp_path} is {owner} \\({names[0]} shows it\\), not a folder of "
                                             "this command's results; writing there could replace its files; choose "
                                             "an empty folder or a new one$"):
        output_path(tmp_path)
    assert output_path(tmp_path, kind=owner) == tmp_path  # its own kind of folder
    if len(names) > 1:  # one of the files alone shows nothing
        (tmp_path / names[0]).unlink()
        assert folder_owner(tmp_path) is None or folder_owner(tmp_path)[0] != owner


def test_a_checkpoint_of_a_trainer_shows_its_folder_and_plain_folders_show_nothing(tmp_path):
    assert folder_owner(tmp_path / "new") is None and folder_owner(tmp_path) is None
    (tmp_path / "notes.txt").write_text("x")
    assert folder_owner(tmp_path) is None and folder_owner(tmp_path / "notes.txt") is None
    (tmp_path / "checkpoint-500").mkdir()
    (tmp_path / "checkpoint-500" / "trainer_state.json").write_text("{}")
    assert folder_owner(tmp_path) == (TRAINER, tmp_path / "checkpoint-500" / "trainer_state.json")


def test_a_runs_files_are_its_inputs_but_the_ones_written_beside_them(tmp_path):
    (tmp_path / "final").mkdir()
    for name in ("config.yaml", "final/README.md", "final/model.safetensors"):
        (tmp_path / name).write_text("x")
    assert sorted(run_files(tmp_path, except_=[tmp_path / "final" / "README.md"])) == [
        tmp_path / "config.yaml", tmp_path / "final" / "model.safetensors"]
    assert run_files(tmp_path / "missing") == [] and run_files(tmp_path / "config.yaml") == []


def test_a_lock_is_refused_while_held_and_holds_the_process_id(tmp_path):
    path = tmp_path / "lock"
    fd = lock_file(path, 0o600, "busy")
    try:
        assert path.read_text() == f"{os.getpid()}\n" and oct(path.stat().st_mode & 0o777) == "0o600"
        with pytest.raises(QueerbiasError, match="^busy$"):
            lock_file(path, 0o600, "busy")
    finally:
        os.close(fd)
    os.close(lock_file(path, 0o600, "busy", wait=True))  # released: taken at once, even when waiting


def test_an_output_lock_refuses_a_second_writer_and_leaves_no_empty_folder_behind(tmp_path):
    folder = tmp_path / "out"
    with OutputLock(folder, "scoring"):
        assert (folder / LOCK_FILE).exists()
        with pytest.raises(QueerbiasError, match=f"^{folder} is in use by another running queerbias process "
                                                 "\\(scoring into the same folder\\); wait for it to finish or "
                                                 "choose another folder$"):
            OutputLock(folder, "scoring").__enter__()
    assert folder.is_dir() and not (folder / LOCK_FILE).exists()  # kept: it succeeded
    with pytest.raises(RuntimeError), OutputLock(tmp_path / "failed", "scoring"):
        raise RuntimeError
    assert not (tmp_path / "failed").exists()  # created by the run that failed: removed
    with pytest.raises(RuntimeError), OutputLock(folder, "scoring"):
        raise RuntimeError
    assert folder.is_dir()  # it was there before
    with pytest.raises(RuntimeError), OutputLock(tmp_path / "kept", "scoring"):
        (tmp_path / "kept" / "part.json").write_text("{}")
        raise RuntimeError
    assert (tmp_path / "kept" / "part.json").exists()  # not empty: what is there stays


def test_a_waiting_lock_is_taken_once_its_holder_lets_go_and_a_removed_lock_file_is_made_anew(tmp_path):
    """The holder lets go from another thread half a second later (however late it runs, the waiter ends
    up holding the lock); it removes the lock file first, as an OutputLock does, so the waiter, woken on
    the removed file's lock, locks a new file."""
    path = tmp_path / "lock"
    holder = lock_file(path, 0o600, "busy")

    def release():
        path.unlink()
        os.close(holder)

    threading.Timer(0.5, release).start()
    waiter = lock_file(path, 0o600, "busy", wait=True)
    try:
        assert path.read_text() == f"{os.getpid()}\n"
        with pytest.raises(QueerbiasError, match="^busy$"):
            lock_file(path, 0o600, "busy")
    finally:
        os.close(waiter)


def test_an_output_lock_makes_missing_parents_and_survives_its_file_being_removed(tmp_path):
    umask = os.umask(0)
    os.umask(umask)
    folder = tmp_path / "new" / "run"
    with OutputLock(folder, "training"):
        assert (folder / LOCK_FILE).stat().st_mode & 0o777 == 0o644 & ~umask
        (folder / LOCK_FILE).unlink()  # e.g. a cleanup that took it
    assert folder.is_dir() and not (folder / LOCK_FILE).exists()
