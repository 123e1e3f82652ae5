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
