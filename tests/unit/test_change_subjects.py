"""A statement of change replaces only memories about its own subject (pure rules, no database)."""

from __future__ import annotations

import pytest

from memory_pg._facts import change_applies, parse_change
from memory_pg.text.changes import judge


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My colleague Tom drinks coffee every morning", "I don't like coffee"),
        # A qualified role is one of several: the main database is not the analytics one.
        ("The main database is PostgreSQL", "The analytics database switched to ClickHouse"),
        ("The database is PostgreSQL", "Our logging database moved to Loki"),
        ("Server A runs on Ubuntu 22.04", "Server B switched from Ubuntu to Debian"),
        ("我妈妈住在北京", "我已经搬到上海了"),
        ("测试环境使用 MySQL", "生产环境不再使用 MySQL"),
        ("我同事每天早上喝咖啡", "我不再喝咖啡"),
        ("我住在北京", "我妈妈已经搬到上海了"),
        ("He lives in Berlin", "I moved to Paris"),
        ("数据分析脚本用 Python", "后端用 Go 而不是 Python"),
        ("我们用 MySQL", "生产环境不再使用 MySQL"),
    ],
)
def test_a_change_about_another_subject_keeps_the_old_memory(old: str, new: str) -> None:
    assert not change_applies(new, old)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I drink coffee every morning", "I don't like coffee anymore"),
        # A contraction or 已 is no subject (a review found these replacing nothing).
        ("I live in Paris", "I've moved to Berlin"),
        ("We use MySQL for the database", "We've switched to PostgreSQL"),
        ("We use MySQL", "We're switching to PostgreSQL"),
        ("我住在北京", "我已搬到上海"),
        ("我们使用 MySQL", "我们已改用 PostgreSQL"),
        ("用户使用 MySQL", "用户已改用 PostgreSQL"),
        # 了 after the verb, the most common way to say it in Chinese.
        ("数据库使用 MySQL", "数据库换成了 PostgreSQL"),
        ("数据库使用 MySQL", "数据库改用了 PostgreSQL"),
        ("我住在北京", "我搬到了上海"),
        # What was switched between the verb and "to".
        ("We use MySQL for the database", "We switched the database to PostgreSQL"),
        ("The database is MySQL", "We migrated the database to PostgreSQL"),
        ("Server B runs on Ubuntu 22.04", "Server B switched from Ubuntu to Debian"),
        ("我住在北京", "我已经搬到上海了"),
        ("生产环境使用 MySQL", "生产环境不再使用 MySQL"),
        ("我每天早上喝咖啡", "我不再喝咖啡"),
        ("我妈妈住在北京", "我妈妈已经搬到上海了"),
        ("用户住在北京", "用户已经搬到上海了"),
        ("My colleague Tom uses Vim", "My colleague Tom no longer uses Vim"),
        ("The app runs on Server A", "The app moved from Server A to Server B"),
        ("后端使用 Python", "后端用 Go 而不是 Python"),
        # What worked before the subject rules, and still does.
        ("I live in Berlin and work as a data engineer.", "I moved to Munich last month."),
        ("Our frontend uses React", "We switched the frontend from React to Svelte"),
        ("Our frontend uses React.", "We switched from React to Svelte."),
        ("We use MySQL", "We no longer use MySQL; everything is on Postgres now"),
        ("CI runs on Jenkins", "We replaced Jenkins with GitHub Actions"),
        ("周会在周二下午", "周会改成周三了"),
        ("缓存用 Memcached", "缓存换成 Redis 了"),
        ("我们用 Memcached", "缓存换成 Redis 了"),
        ("关键决策：数据库使用 MySQL", "关键决策：数据库改用 PostgreSQL，不再使用 MySQL"),
        ("我们用 Kafka 做消息队列", "消息队列不再用 Kafka，改用 RabbitMQ"),
        ("We use Flask for the API.", "We went with FastAPI instead of Flask."),
        ("The service is written in Java", "We migrated the service from Java to Kotlin"),
        ("服务器部署在阿里云", "我们已经把服务器从阿里云迁移到腾讯云了"),
    ],
)
def test_a_change_about_the_same_subject_replaces_the_old_memory(old: str, new: str) -> None:
    assert change_applies(new, old)


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("Server B switched from Ubuntu to Debian", "Server B"),
        ("生产环境不再使用 MySQL", "生产环境"),
        ("We switched the frontend from React to Svelte", "frontend"),
        ("后端用 Go 而不是 Python", "后端"),
        ("I don't like coffee", ""),
        ("我已经搬到上海了", ""),
        ("我妈妈已经搬到上海了", "妈妈"),
    ],
)
def test_every_pattern_reads_its_subject(text: str, subject: str) -> None:
    change = parse_change(text)
    assert change is not None
    assert change.subject == subject


def test_only_the_speaker_living_somewhere_is_a_move_of_the_speaker() -> None:
    moved = parse_change("我已经搬到上海了")
    assert moved is not None and moved.residence
    assert not change_applies("我已经搬到上海了", "我妈妈住在北京")
    assert not change_applies("我已经搬到上海了", "我在字节跳动工作")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # Two ages, two prices: a kind of value both state, with no word in common, is
        # no one subject (a neighbour's age and the speaker's; two appliances).
        ("隔壁王叔六十五了", "我今年五十八，下个月就退休了"),
        ("新买的扫地机器人是石头的，花了2899", "给阳台换了台烘干机，美的的，3499块"),
    ],
)
def test_a_kind_of_value_in_common_is_no_subject_in_chinese(old: str, new: str) -> None:
    assert judge(old, new) is None


def test_the_speakers_own_fact_changed_in_other_words_is_still_one() -> None:
    # The speaker's job, said again with no word in common: still replaced.
    assert judge("我在超市当收银员", "转行了，现在跑外卖") is not None


def test_a_span_of_years_is_when_something_was_so_not_a_move() -> None:
    # "from 2018 to 2021" dates a past job; it moves nothing from one value to another.
    assert (
        judge("I worked at IBM from 2015 to 2018.", "I worked at Oracle from 2018 to 2021.") is None
    )
    assert judge("预算是2000", "预算从2000涨到2500了") is not None  # amounts, not years
    assert judge("Rent is 1950 a month.", "Rent went from 1950 to 2050 a month.") is not None
    assert judge("My monthly budget is 2000.", "My monthly budget went from 2000 to 2040.")


def test_an_ex_or_a_step_relative_is_another_person() -> None:
    # "my ex-wife" holds her own email, not "my wife"'s.
    old, new = "My wife's email is mara.lind@example.com", "My ex-wife's new email is m@example.com"
    assert judge(old, new) is None
    assert judge("My dad lives in Ohio.", "My stepdad moved to Utah.") is None
    assert judge("My mom works at the hospital.", "My step-mom now works at the bank.") is None
    assert judge("My brother lives in Ohio.", "My half brother now lives in Utah.") is None
    assert judge("My wife works at Google.", "My ex wife now works at Meta.") is None
