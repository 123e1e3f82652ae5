"""A statement of change never replaces a memory about someone or something else.

Through the public store: each old memory must stay current (no ``change`` event in
its history) when the change is about another person, server or environment. The
same changes about the same subject replace it: ``test_explicit_changes_supersede``
in ``test_write_path.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory_pg.write_evaluation import evaluate_write_path, load_write_path_set


@pytest.mark.parametrize(
    ("memory_type", "old", "new"),
    [
        ("user_profile", "My colleague Tom drinks coffee every morning", "I don't like coffee"),
        (
            "project_status",
            "Server A runs on Ubuntu 22.04",
            "Server B switched from Ubuntu to Debian",
        ),
        ("user_profile", "我妈妈住在北京", "我已经搬到上海了"),
        ("key_decision", "测试环境使用 MySQL", "生产环境不再使用 MySQL"),
        # A meeting's move to a time is no move of home.
        ("user_profile", "I live in Berlin", "We moved to 2pm for the weekly sync"),
        ("user_profile", "我住在北京", "我搬到 8:00 以后再出门"),
        # An old time is no old value: any memory may name it.
        ("project_status", "The backup runs at 8am", "I stopped taking the 8am train"),
        # Alike to the bundled model (it reads neither name: cosine 0.84) and in most
        # words: each was replaced by the other person's fact before.
        ("user_profile", "小王喜欢喝咖啡", "小李喜欢喝咖啡"),
        ("user_profile", "王芳对花生过敏", "李娜对花生过敏"),
        ("project_status", "小王下周去北京出差", "小李下周去北京出差"),
        # Someone else's number or address, by role or by "she".
        ("user_profile", "我的手机号是 13522223333", "换了个房东，新房东电话 13788889999"),
        ("user_profile", "My email is lee@fastmail.com", "Ana quit Gmail, she's at ana@hey.com"),
        # What was left, or what was changed, is another thing than the old value.
        ("user_profile", "我在京东上班", "我从滴滴离职了，下周去美团"),
        ("project_status", "Project Kestrel is paused", "We shut down Project Osprey last week"),
        # The date stands; only the place changed.
        ("project_status", "堂妹的婚礼在9月", "婚礼场地换了，改在酒店办"),
        # A product of the same kind, but another person's; a phone number is no phone.
        ("user_profile", "I use a MacBook for work.", "My wife switched to a ThinkPad."),
        ("user_profile", "My phone number is 555-0101.", "Upgraded to a Pixel 8."),
        # A name with another number: a date is no version, another server is no
        # new version of this one.
        ("project_status", "The launch is on March 10.", "The review is on March 8."),
        ("project_status", "Server A runs Ubuntu 20.04.", "Server B runs Ubuntu 22.04."),
        # Two things of a person's money: the salary is not the rent.
        ("user_profile", "我的工资是一万", "我的房租是三千"),
        # What a change is said of: an organisation's move, another one of a kind,
        # a relative's own value beside the speaker's "my".
        ("user_profile", "我住在天河区。", "公司搬到黄埔了。"),
        ("project_status", "Project Lark ships on May 9.", "Project Heron's launch moved to July."),
        ("user_profile", "My commute is 40 minutes.", "My husband's commute is 15 minutes now."),
    ],
)
def test_a_change_about_another_subject_keeps_both(
    store: Any, memory_type: str, old: str, new: str
) -> None:
    old_id = store.add_memory(old, memory_type)
    new_id = store.add_memory(new, memory_type)
    assert {r["id"] for r in store.list_memories()} == {old_id, new_id}
    assert [e["event"] for e in store.history(old_id)] == ["added"]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # The person is the value that changed, not who the fact is about.
        ("项目负责人是王芳", "项目负责人是李娜"),
        ("后端负责人是小王", "后端负责人是小李"),
        ("My favourite editor is Vim", "My favourite editor is Emacs"),
        # The old person leaves, named, and the new text names no role at all.
        ("我的主治医生是钱大夫", "钱大夫退休了，现在看病找的是冯医生"),
        ("My dentist is Dr. Ruiz", "Dr. Ruiz retired, I see Dr. Okafor now"),
    ],
)
def test_a_new_person_in_the_same_role_replaces_the_old_one(store: Any, old: str, new: str) -> None:
    old_id = store.add_memory(old, "user_profile")
    new_id = store.add_memory(new, "user_profile")
    assert store.get(old_id)["superseded_by"] == new_id
    assert [r["text"] for r in store.list_memories()] == [new]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A question word that asks nothing ("哪儿都去": anywhere) and an abbreviation
        # that is no "if": statements, which may replace (a question never does).
        ("我周末都宅在家", "现在周末哪儿都去"),
        ("I do IF, 16:8 every weekday", "Stopped IF last month, I eat breakfast again now"),
    ],
)
def test_a_change_said_with_a_question_word_that_asks_nothing_replaces(
    store: Any, old: str, new: str
) -> None:
    old_id = store.add_memory(old, "user_profile")
    new_id = store.add_memory(new, "user_profile")
    assert store.get(old_id)["superseded_by"] == new_id


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # Two products of one kind (editor, team chat): the new one is the kind's value,
        # though the texts share no word.
        ("I write code in VS Code.", "Switched to Neovim last month."),
        ("团队沟通用钉钉", "公司统一换成飞书了"),
        ("我用的是iPhone 14", "手机换成华为Mate 60 Pro了"),  # a brand's capitals as written
        # One thing named by two words (月薪 / 工资; a diet by the diet it is).
        ("我的月薪是一万二", "涨工资了，现在税后一万五"),
        ("My diet is keto.", "I'm no longer doing keto; these days it's Mediterranean."),
        # A named thing with another number, said with no word of change.
        ("Our servers run Python 3.9.", "The servers are on Python 3.12 since the upgrade window."),
        ("I'm reading Chapter 3 of Dune.", "Reading Chapter 7 of Dune this week."),
        # A value moved from A to B, with a decimal point.
        ("My resting heart rate average is 61.5.", "Heart rate average went from 61.5 to 58.2."),
    ],
)
def test_the_same_thing_named_another_way_replaces_the_old(store: Any, old: str, new: str) -> None:
    old_id = store.add_memory(old, "user_profile")
    new_id = store.add_memory(new, "user_profile")
    assert store.get(old_id)["superseded_by"] == new_id


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # One relative, named by two words: one holder.
        ("My mother lives in Ohio.", "Mom moved to Florida last year."),
        ("我妈住在成都", "妈妈搬到重庆了"),
    ],
)
def test_a_relative_named_another_way_is_the_same_holder(store: Any, old: str, new: str) -> None:
    old_id = store.add_memory(old, "user_profile")
    new_id = store.add_memory(new, "user_profile")
    assert store.get(old_id)["superseded_by"] == new_id


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A plan or a pending matter, then its completion.
        ("这周要去把签证办了", "签证办好了，下周去拿"),
        ("装修方案还没定", "装修方案搞定了，下月开工"),
    ],
)
def test_a_matter_done_replaces_the_pending_one(store: Any, old: str, new: str) -> None:
    old_id = store.add_memory(old, "todo")
    new_id = store.add_memory(new, "todo")
    assert store.get(old_id)["superseded_by"] == new_id


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A job left for another, with when: the old employer is given up by name, so
        # the time the new text gives is no other aspect of one event.
        ("我在腾讯做产品经理", "已经从腾讯离职了，下个月去阿里"),
        (
            "I work at Accenture as an analyst.",
            "Left Accenture in March, starting at Shopify next week.",
        ),
    ],
)
def test_a_job_left_for_another_replaces_the_old_one(store: Any, old: str, new: str) -> None:
    old_id = store.add_memory(old, "user_profile")
    new_id = store.add_memory(new, "user_profile")
    assert store.get(old_id)["superseded_by"] == new_id


def test_the_subjects_write_path_set_has_no_false_supersession(make_store: Any) -> None:
    # The set measured by `memory-pg eval --write-path tests/integration/write_path_subjects.json`.
    path = Path(__file__).with_name("write_path_subjects.json")
    report = evaluate_write_path(make_store(), load_write_path_set(path))
    assert report["failures"] == []
    assert report["overall"]["false_supersessions"] == 0
    assert report["overall"]["supersessions_made"] == report["overall"]["supersessions_expected"]
