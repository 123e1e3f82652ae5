"""Offline entity extraction: English and Chinese names, @handles, titles; merged by key only."""

from __future__ import annotations

from memory_pg.entities import entity_key, extract


def names(text: str) -> list[str]:
    return [e.name for e in extract(text)]


def kinds(text: str) -> dict[str, str]:
    return {e.name: e.kind for e in extract(text)}


def test_english_names_and_capitalised_phrases_are_found_in_order():
    text = "Yesterday Melanie took the kids to the Museum of Natural History in New York."
    assert names(text) == ["Melanie", "Museum of Natural History", "New York"]
    assert kinds(text)["New York"] == "place"


def test_a_common_word_that_only_opens_a_sentence_is_not_a_name():
    assert names("The weather was nice. Running is fun. I like running.") == []
    assert names("Thanks, Caroline! Hope Jo likes it.") == ["Caroline", "Jo"]


def test_speaker_prefix_handles_and_quoted_titles():
    text = '[8 May 2023] Caroline: ping @alice_w, I finished "Becoming Nicole" and 《三体》'
    found = kinds(text)
    assert found["Caroline"] == "person"
    assert found["@alice_w"] == "person"
    assert found["Becoming Nicole"] == "thing"
    assert found["三体"] == "thing"
    assert "May" not in found  # a month names no entity


def test_a_quoted_sentence_is_not_a_title():
    assert names('She said "we should really go home now, it is late."') == []


def test_organisations_projects_and_product_spellings():
    found = kinds("The team at Acme Corp moved Project Phoenix to PostgreSQL.")
    assert found == {
        "Acme Corp": "organisation",
        "Project Phoenix": "project",
        "PostgreSQL": "thing",
    }


def test_chinese_person_place_and_organisation_names_from_jieba_tags():
    found = kinds("小王昨天在北京见了张伟，我和小李去上海参加了腾讯的会议。")
    assert found["小王"] == "person"
    assert found["张伟"] == "person"
    assert found["小李"] == "person"  # 小 + a one-character surname, joined
    assert found["北京"] == "place"
    assert found["上海"] == "place"
    assert "腾讯" in found
    assert "会议" not in found  # a common noun is no entity


def test_mixed_chinese_and_english_text():
    assert {"小王", "PostgreSQL"} <= set(names("小王说我们改用 PostgreSQL 了"))


def test_spellings_merge_only_on_the_exact_normalised_key():
    assert entity_key("ＯｐｅｎＡＩ") == entity_key("OpenAI") == entity_key("openai")
    assert entity_key("Caroline's") == entity_key("caroline")
    assert entity_key("@Alice") == entity_key("alice")
    # Never fuzzy: two people who share a surname, or a nickname, stay apart.
    assert entity_key("小王") != entity_key("王伟")
    assert entity_key("Jon") != entity_key("John")
    found = extract("We met OpenAI people; later OPENAI wrote back.")
    assert [(e.name, e.aliases) for e in found] == [("OpenAI", ("OPENAI",))]


def test_one_entity_per_key_and_a_bounded_count():
    assert names("Jo met Jo and JO.") == ["Jo"]
    many = " ".join(f"Person{i} Smith{i}," for i in range(60))
    assert len(extract("We saw " + many)) <= 24


def test_entities_an_llm_listed_are_read_defensively_and_never_merge_two_listed_names():
    from memory_pg.entities import from_llm

    listed = from_llm(
        [
            {"name": "小王", "kind": "person", "aliases": ["王伟", "小王"]},
            {"name": "王芳", "kind": "人物", "aliases": []},
            {"name": "Jo", "kind": "friend", "aliases": ["王芳"]},  # contradicts the above
            {"name": 5},
            "Boston",
            {"kind": "place"},
        ]
    )
    assert listed is not None
    assert [(e.name, e.kind, e.aliases) for e in listed] == [
        ("小王", "person", ("王伟",)),
        ("王芳", "person", ()),
        ("Jo", "thing", ()),
    ]
    assert from_llm("小王 is a person") is None
    assert from_llm(None) is None


def test_a_memory_gets_the_listed_entities_it_names_and_the_rules_fill_the_rest():
    from memory_pg.entities import combine, from_llm, named_in

    listed = from_llm(
        [
            {"name": "Al", "kind": "person", "aliases": ["Albert"]},
            {"name": "小王", "kind": "person", "aliases": ["王伟"]},
        ]
    )
    assert listed is not None
    assert named_in("We also met there", listed) == ()  # whole words only
    assert [e.name for e in named_in("Albert met 王伟", listed)] == ["Al", "小王"]
    mine = named_in("小王说他下个月去北京出差", listed)
    assert [e.name for e in combine(mine, extract("小王说他下个月去北京出差"))] == ["小王", "北京"]
    assert combine(None, extract("Caroline went")) == extract("Caroline went")
