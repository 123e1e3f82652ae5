"""The Chinese dev set's script still runs and finds what the set says it should."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow


def test_the_chinese_dev_set_reports_recall_per_split_and_category(tmp_path, db_url):
    from benchmarks.zh_dev import main

    out = tmp_path / "zh_dev.json"
    assert main(["--database-url", db_url, "--out", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["now_passed"] is True
    results = report["results"]["default"]
    assert {"all", "tune", "report", "report/temporal"} <= results.keys()
    assert results["all"]["questions"] == 42
    # Every temporal question names its time ("上周", "9月7号"): all are found in the top 5.
    assert results["report/temporal"]["recall@5"] == 1.0


def test_the_chinese_latency_script_asks_with_and_without_sounds(db_url, capsys):
    from benchmarks.zh_latency import main
    from memory_pg import _segment

    args = ["--database-url", db_url, "--memories", "60", "--questions", "10", "--turns", "1"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "60 memories, 10 questions" in printed
    assert "words only" in printed and "sounds and characters" in printed
    assert _segment.PINYIN is True  # the switch is left on
