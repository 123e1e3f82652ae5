"""A bad environment value fails its own command as a usage error that names the variable,
never every command with a traceback; a Hermes home that cannot be written is a clear error.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from memory_pg.cli import main

#: Nothing listens on the discard port: no command here should get as far as connecting.
DOWN_URL = "postgresql://memory_pg@127.0.0.1:9/memory_pg"


@pytest.mark.parametrize(
    ("variable", "value", "argv"),
    [
        ("MEMORY_PG_FORGET_BATCH_SIZE", "1k", ["forget"]),
        ("MEMORY_PG_FORGET_PAUSE", "soon", ["forget"]),
        ("MEMORY_PG_REEMBED_BATCH_SIZE", "lots", ["reembed", "--model", "m"]),
        ("MEMORY_PG_EVAL_TOP_K", "5,x", ["eval"]),
        ("MEMORY_PG_EVAL_TOP_K", "0", ["eval"]),
    ],
)
def test_a_bad_value_is_a_usage_error_naming_its_variable(
    monkeypatch, capsys, variable, value, argv
):
    monkeypatch.setenv(variable, value)
    with pytest.raises(SystemExit) as exited:
        main(["--database-url", DOWN_URL, *argv], out=io.StringIO())
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"{variable}={value!r}" in err
    assert "Traceback" not in err


def test_a_bad_value_leaves_the_other_commands_working(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("MEMORY_PG_FORGET_BATCH_SIZE", "1k")
    monkeypatch.setenv("MEMORY_PG_EVAL_TOP_K", "5,x")
    out = io.StringIO()
    assert main(["hermes", "install", "--hermes-home", str(tmp_path)], out=out) == 0
    assert (tmp_path / "plugins" / "memory_pg" / "__init__.py").is_file()


def test_a_good_value_still_applies(monkeypatch):
    from memory_pg.cli import build_parser

    monkeypatch.setenv("MEMORY_PG_FORGET_BATCH_SIZE", "7")
    monkeypatch.setenv("MEMORY_PG_EVAL_TOP_K", "1,3")
    parser = build_parser()
    assert parser.parse_args(["forget"]).batch_size == 7
    assert parser.parse_args(["eval"]).top_k == [1, 3]
    assert parser.parse_args(["forget", "--batch-size", "9"]).batch_size == 9


def test_a_bad_flag_value_is_still_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["forget", "--batch-size", "2x"], out=io.StringIO())
    assert exited.value.code == 2
    assert "--batch-size: '2x' is not a whole number" in capsys.readouterr().err


def test_a_hermes_home_that_cannot_be_written_is_a_clear_error(capsys, tmp_path: Path):
    a_file = tmp_path / "not-a-folder"
    a_file.write_text("", encoding="utf-8")
    code = main(["hermes", "install", "--hermes-home", str(a_file)], out=io.StringIO())
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("memory-pg: error: cannot install the plugin under")
    assert str(a_file) in err and "--hermes-home" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "db", "--user", "a", "--top-k", "abc"],
        ["add", "x", "--user", "a", "--importance", "high"],
        ["migrate", "--sql", "--embedding-dim", "abc"],
    ],
)
def test_a_bad_number_option_is_a_usage_error(capsys, argv):
    with pytest.raises(SystemExit) as exited:
        main(["--database-url", DOWN_URL, *argv], out=io.StringIO())
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "is not a" in err and "Traceback" not in err


def test_a_bad_top_k_variable_names_itself_and_a_good_one_applies(monkeypatch, capsys):
    from memory_pg.cli import build_parser

    monkeypatch.setenv("MEMORY_PG_TOP_K", "many")
    with pytest.raises(SystemExit):
        main(["--database-url", DOWN_URL, "search", "db", "--user", "a"], out=io.StringIO())
    assert "MEMORY_PG_TOP_K='many'" in capsys.readouterr().err
    monkeypatch.setenv("MEMORY_PG_TOP_K", "7")
    assert build_parser().parse_args(["search", "db"]).top_k == 7


@pytest.mark.parametrize(("value", "level"), [("2", 2), ("debug", 2), ("info", 1), ("loud", 0)])
def test_memory_pg_verbose_never_stops_a_command(monkeypatch, capsys, value, level):
    from memory_pg.cli import build_parser

    monkeypatch.setenv("MEMORY_PG_VERBOSE", value)
    assert build_parser().parse_args(["migrate", "--sql"]).verbose == level
    out = io.StringIO()
    assert main(["migrate", "--sql"], out=out) == 0
    assert "CREATE TABLE" in out.getvalue()


@pytest.mark.parametrize("value", ["true", "1", "yes"])
def test_memory_pg_json_takes_the_same_words_in_every_command(monkeypatch, value):
    from memory_pg.cli import build_parser

    monkeypatch.setenv("MEMORY_PG_JSON", value)
    parser = build_parser()
    assert parser.parse_args(["search", "db"]).json is True
    assert parser.parse_args(["forget"]).json is True


def test_a_digit_that_is_not_ascii_does_not_stop_a_command(monkeypatch):
    from memory_pg.cli import build_parser

    monkeypatch.setenv("MEMORY_PG_VERBOSE", "²")
    assert build_parser().parse_args(["migrate", "--sql"]).verbose == 0
