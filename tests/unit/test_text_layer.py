"""The text layer read as a user's sentences: which attribute, which name, which change.

Cases here were written for these tests, not taken from the sets the rules were
tuned on; the sets' figures are benchmarks (docs/measurements.md).
"""

from __future__ import annotations

import re

import pytest

from memory_pg.text.attributes import answered_by, asked, stated, subject_words
from memory_pg.text.changes import judge
from memory_pg.text.query import analyse, asked_about
from memory_pg.text.questions import asks_latest
from memory_pg.text.references import compared_with, name_in, names_given, refers, says_of, sides
from memory_pg.text.topics import product_topics


@pytest.mark.parametrize(
    ("question", "attribute"),
    [
        ("我姑父今年多大了？", "age"),
        ("How old is our landlord?", "age"),
        ("我嫂子是做什么工作的？", "occupation"),
        ("我表弟在哪儿上班？", "employer"),
        ("他们的小区叫什么？", "name"),
        ("我外婆老家是哪里的？", "hometown"),
        ("What's my dentist's phone number?", "phone"),
        ("我女儿对什么过敏？", "diet"),
        ("那家火锅店怎么样？", "opinion"),
        ("演唱会几点开始？", "time"),
        # Work said plainly ("干活", "打工") asks where as an employer, not a place.
        ("我表哥在哪儿打工？", "employer"),
        ("他老婆在哪干活？", "employer"),
        # "用的是什么" asks what is used, as "用什么" does.
        ("我剪视频用的是什么软件？", "tool"),
        # Where one works, with the kind of place between ("哪家医院", "哪所学校").
        ("我表姐在哪家医院上班？", "employer"),
        # The south-west's "好大岁数", the polite 高寿; an injury; a major said with 啥.
        ("你外公好大岁数了？", "age"),
        ("他上回受了啥子伤？", "health"),
        ("我侄女学的啥专业？", "education"),
        # What was spent on someone, or bought for them.
        ("今年在猫身上花过哪些钱？", "price"),
        ("给我妈买过些啥？", "price"),
        # Where one teaches is where one works.
        ("我姨在哪所中学任教？", "employer"),
        # Where one lives, asked by the place or its number.
        ("我住的地方门牌号是多少？", "home"),
        # An exam's result, by its points, its rank or how it went.
        ("侄子中考考了多少分？", "score"),
        ("她驾照科目一考了几分？", "score"),
        ("儿子期末考得怎么样？", "score"),
        ("What was my GMAT score?", "score"),
    ],
)
def test_a_question_asks_one_attribute(question: str, attribute: str) -> None:
    assert attribute in asked(question)


@pytest.mark.parametrize(
    "text", ["我们明天开会讨论预算", "Met Tom for lunch today", "今天天气不错"]
)
def test_a_statement_asks_for_nothing(text: str) -> None:
    assert asked(text) == ()


@pytest.mark.parametrize(
    ("text", "attribute"),
    [
        ("我姑父今年五十三岁", "age"),
        ("My landlord turned 70 in March", "age"),
        ("嫂子在社区医院当护士", "occupation"),
        ("外婆是湖南湘潭人，老家在乡下", "hometown"),
        ("牙医的电话是 13912345678", "phone"),
        ("女儿对芒果过敏", "diet"),
        # Where a thing is, by a locative: "开在", "位于", "在…附近".
        ("那家面馆开在地铁站旁边", "place"),
        ("新办公室位于滨江区", "place"),
        ("我家在公园对面", "place"),
        ("剪视频用的是 DaVinci Resolve", "tool"),
        # A living by what one does, not by a job's name.
        ("我表叔在老家种地，还养了二十头猪", "occupation"),
        ("他年轻时跑远洋，开了半辈子船", "occupation"),
        ("小舅在一家研究所搞科研", "occupation"),
        # An injury or a finding named without 病.
        ("跑步把脚踝扭伤了", "health"),
        ("体检查出来甲状腺有个结节", "health"),
        # An amount spent, with or without its unit; an employee is employed.
        ("给狗换了个新笼子，一百二", "price"),
        ("带猫去打疫苗，花了三百五", "price"),
        # An amount right after a verb of paying or charging, or after what was ordered.
        ("洗牙诊所收了480，下次半年后再去", "price"),
        ("电动车电瓶修了260", "price"),
        ("给老爸订了个按摩椅，3999", "price"),
        # A business run or a subject taught is a living; a discipline studied, education.
        ("我舅在镇上开修车铺", "occupation"),
        ("她在二中教化学", "occupation"),
        ("表妹读的是临床医学", "education"),
        ("表哥在比亚迪评上了优秀员工", "employer"),
        # A clause that is a bare number of years, after the person it is said of.
        ("表姐周敏，36，在银行做柜员", "age"),
        ("二舅还在县城，58了，身体还硬朗", "age"),
        # A place's person as a clause of its own; a surname with a title is a name.
        ("新来的实习生小吴，广西桂林人，挺能吃辣", "hometown"),
        ("孩子的钢琴老师是林老师", "name"),
        # One who teaches somewhere makes a living by it.
        ("表嫂在镇上的中学教日语", "occupation"),
        # An exam's result: its points, a rank in class, the result out.
        ("侄子中考考了六百一十五分", "score"),
        ("闺女这次月考排第三名", "score"),
        ("驾照科目一成绩出来了，96", "score"),
        ("I scored 710 on the GMAT", "score"),
    ],
)
def test_a_memory_states_the_attribute(text: str, attribute: str) -> None:
    assert attribute in stated(text)


@pytest.mark.parametrize("text", ["车修了一个礼拜才拿回来", "快递退了3个，剩下的留着"])
def test_a_duration_or_a_count_after_a_verb_of_paying_is_no_price(text: str) -> None:
    assert "price" not in stated(text)


@pytest.mark.parametrize(
    "text", ["下午四点十分到站", "服务十分周到", "五分钟就到了", "三分之一的人没来"]
)
def test_a_time_a_degree_or_a_share_is_no_score(text: str) -> None:
    assert "score" not in stated(text)


def test_a_hospital_named_with_an_illness_is_no_employer() -> None:
    assert "employer" not in stated("我舅血压有点高，在县医院开了药")
    assert "employer" in stated("我姐在协和医院上班，最近腰疼")  # work said too
    assert "employer" in stated("我姐在协和医院当护士")


@pytest.mark.parametrize("text", ["开车去店里拿货", "下午开会到饭店吃饭"])
def test_a_drive_or_a_meeting_near_a_shop_is_no_living(text: str) -> None:
    assert "occupation" not in stated(text)


def test_an_occupation_is_answered_by_an_employer_too() -> None:
    assert set(answered_by(("occupation",))) == {"occupation", "employer"}


def test_the_subject_of_a_question_is_its_noun_not_its_asking_words() -> None:
    assert subject_words("我姑父今年多大了？", asked("我姑父今年多大了？")) == ("姑父",)
    assert subject_words("How old is our landlord?", ("age",)) == ("landlord",)
    assert subject_words("我多大了？", ("age",)) == ()
    # A pet's name that opens the question, whatever jieba tags it ("大黄": rhubarb).
    assert subject_words("大黄上回看病是啥毛病？", ("health",)) == ("大黄",)


def test_a_description_finds_the_name_a_memory_gives_it() -> None:
    query = "我常去的那家理发店怎么样？"
    words = refers(query)
    assert "理发店" in words
    names = names_given(words, ["我常去的那家理发店是星剪", "今天加班"], query)
    assert [n.text for n in names] == ["星剪"]
    assert "星剪" in name_in(query, words, names)


def test_a_surname_gives_the_forms_of_address_that_name_the_person() -> None:
    query = "我房东怎么联系？"
    names = names_given(refers(query), ["房东是个退休老师，姓钱"], query)
    assert len(names) == 1 and "钱阿姨" in names[0].text.split()


@pytest.mark.parametrize(
    ("query", "memory", "name"),
    [
        ("那个在医院上夜班的朋友叫什么？", "老胡在医院上夜班，白天都在睡觉", "老胡"),
        ("对海鲜过敏的那个同事是哪里人？", "同事里就小唐对海鲜过敏，聚餐得注意", "小唐"),
        ("在杭州开民宿的那位亲戚多大了？", "我表哥老齐在杭州开民宿", "老齐"),
    ],
)
def test_a_description_is_said_of_the_person_its_clause_is_about(
    query: str, memory: str, name: str
) -> None:
    assert name in [n.text for n in names_given(refers(query), [memory], query)]


def test_no_name_is_found_where_the_memory_gives_none() -> None:
    query = "我房东怎么联系？"
    assert names_given(refers(query), ["房东人挺好的"], query) == ()


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("我们的 CI 跑在 Travis 上", "CI 从 Travis 迁到了 GitHub Actions"),
        ("The offsite is in Lisbon", "The offsite moved to Porto"),
        ("我每周三上日语课", "日语课不上了"),
        ("Our hosting bill is $400 a month", "The hosting bill dropped to $250 a month"),
        ("我的微信号是 lily_88", "微信号换成 lily_2026 了"),
        # What it came to in the end.
        ("The team offsite is planned for Denver", "The team offsite ended up in Austin"),
        ("年会场地定在公司食堂", "年会场地最终定在了滨江酒店"),
        ("毕业旅行打算去云南", "毕业旅行后来定了去海南"),
        # "too" beside a word of change says the change holds for another thing too.
        ("The standup is at 9:30", "We moved the standup to 10:00, the retro too"),
    ],
)
def test_a_plainly_stated_change_is_one(old: str, new: str) -> None:
    evidence = judge(old, new)
    assert evidence is not None
    assert evidence.as_detail()["cue_kind"]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("我姐姐住在成都", "我弟弟住在西安"),  # two holders
        ("测试环境用 MySQL", "生产环境不再用 MySQL"),  # one noun, two things
        ("We use Redis for caching", "We also added Kafka for events"),  # an addition
        ("We host on AWS", "Maybe we should move to GCP"),  # a hedge
        ("下周去看外婆", "下周去看外婆的计划照旧"),  # nothing changed
        ("Use Python for the backend", "We no longer use Python 2"),  # another thing
        ("We upgraded Postgres last month", "Last week we upgraded Node"),  # two events
        # An exception for a while: the old fact stands again after it.
        ("We hold the retro on Fridays", "The retro moved to Thursday this week only"),
        ("我每天骑车上班", "这两天车坏了，临时改坐地铁"),
        ("The cat sleeps in the kitchen", "The cat sleeps upstairs for the holidays"),
        # One time both say: two facts of that time, side by side.
        ("This year I aim to learn Rust", "This year I aim to run a half marathon"),
        ("这次出差我带了笔记本", "这次出差我还想顺路看看老同学"),
        # One more, said with "too"; someone described as retired.
        ("My son plays the violin", "Turns out my son plays the cello too"),
        ("隔壁住着一个画家", "隔壁搬来个退休的老师，人挺和气"),
        # Something done in the end, or a trip, is no new value of a fact.
        ("我妈有高血压", "我妈最终还是去医院做了检查"),
        ("My dad has diabetes", "Turns out my dad's cough was just allergies"),
        ("我妈住在老家", "我妈从老家到了北京，过年在我这儿住"),
    ],
)
def test_what_is_not_a_change_keeps_both(old: str, new: str) -> None:
    assert judge(old, new) is None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # The old value leaves, named, where the new text names no subject at all.
        ("My dentist is Dr. Alvarez", "Dr. Alvarez retired, I see Dr. Osei now"),
        ("我的班主任是周老师", "周老师调走了，现在班主任换成了吴老师"),
        ("我的书房放的是实木书桌", "实木书桌扔了，换了一张升降桌"),
        # A word both texts say is their subject, not the signal ("迁移").
        ("服务迁移完成了 20%", "服务迁移进度到 60% 了"),
        # A time that says when the change came is no new value.
        ("I work at Globex", "Left Globex last month, starting at Initech on Monday"),
        ("我在网易做测试", "我从网易离职了，下个月入职小米"),
        # One value of a shape a person has one of, named by another word.
        ("我的手机号是 13511112222", "换号了，新号码是 13633334444"),
        ("My cell is 415-555-0134", "New number: 415-555-0199, the old one is off"),
    ],
)
def test_a_change_named_by_its_old_value_or_its_shape_is_one(old: str, new: str) -> None:
    assert judge(old, new) is not None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("我的手机号是 13511112222", "换了个房东，新房东电话 13633334444"),  # the landlord's
        ("My email is sam@fastmail.com", "Priya stopped using Yahoo, she's at priya@hey.com now"),
        ("表哥的婚礼在10月", "婚礼场地换了，改在湖边办"),  # the date stands, the place changed
        ("我在华为上班", "我从联想离职了，下周去小米"),  # what was left is another employer
        ("我的主治医生是孙大夫", "医生把我的胰岛素换成了二甲双胍"),  # the drug changed
        ("The gym fee is $40 a month", "The gym fee was repriced at $40 a month"),  # same value
        ("Project Falcon is paused", "We shut down Project Heron last week"),  # two projects
        ("雷鸟项目还在推进", "Orion 项目这周暂停了"),
        ("我对花生过敏", "奶茶已经戒了"),  # two diet facts
        ("I live in Denver", "I grew up in Omaha"),  # home and hometown
    ],
)
def test_a_change_of_another_thing_keeps_both(old: str, new: str) -> None:
    assert judge(old, new) is None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A role named by its holder: another person put in it is a new value.
        ("Our landlord is Mr. Okafor", "The building was sold, our landlord is Mrs. Chen now"),
        ("My physio is Dr. Brandt", "I switched to Dr. Laine after the move"),
        ("我们部门经理是老赵", "老赵调去分公司了，经理换成了小孟"),
        # What the new text leaves behind is the old value: one subject by itself.
        ("写周报用的是飞书文档", "周报从飞书文档换成了语雀"),
        ("Our wiki lives in Confluence", "The docs moved from Confluence to Notion in March"),
    ],
)
def test_a_person_put_in_a_role_or_a_value_left_behind_is_a_change(old: str, new: str) -> None:
    assert judge(old, new) is not None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My manager is Priya", "I switched to Dr. Laine after the move"),  # no role in common
        ("My dentist is Dr. Brandt", "My sister switched to Dr. Laine"),  # the sister's
        ("我们部门经理是老赵", "我们组新来了一个实习生小孟"),  # another role
        ("写周报用的是飞书文档", "会议纪要从石墨换成了腾讯文档"),  # another thing left
    ],
)
def test_a_person_or_value_of_another_role_keeps_both(old: str, new: str) -> None:
    assert judge(old, new) is None


def test_a_value_stated_against_another_names_the_other() -> None:
    texts = ["我表哥比我大五岁，在银行上班", "我表哥喜欢打羽毛球"]
    assert compared_with("我表哥今年多大？", texts) == ("我",)
    assert compared_with("我姨妈多大了？", ["我姨妈比我舅舅小三岁"]) == ("舅舅",)
    # No attribute asked, or the comparison is of another attribute: nothing needed.
    assert compared_with("我表哥怎么样？", texts) == ()
    assert compared_with("我表哥住哪儿？", texts) == ()


def test_whose_fact_a_text_states() -> None:
    assert says_of("我", "我今年二十六，刚工作两年")
    assert not says_of("我", "我表哥比我大五岁")
    assert says_of("舅舅", "我舅舅今年五十了")
    assert not says_of("舅舅", "我姨妈比我舅舅小三岁")


@pytest.mark.parametrize("text", ["我今年三十四", "我今年六十一，退休好几年了", "他今年45"])
def test_an_age_this_year_is_stated_without_sui(text: str) -> None:
    assert "age" in stated(text)


@pytest.mark.parametrize("text", ["我今年五十整", "我爸五十八，还在上班", "老婆三十五，属马"])
def test_an_age_after_its_holder_is_stated_without_sui(text: str) -> None:
    assert "age" in stated(text)


def test_an_age_against_another_is_no_year_of_college() -> None:
    # "大三岁" is three years older, not 大三 (a third-year student).
    assert stated("我哥比我大三岁") == ("age",)
    assert "education" in stated("他大三，在找实习")


@pytest.mark.parametrize("text", ["老婆最近膝盖也不好，在贴膏药", "我胃不舒服好几天了"])
def test_a_part_of_the_body_not_well_states_health(text: str) -> None:
    assert "health" in stated(text)
    assert "health" not in stated("这家店服务不好")


def _about(question: str) -> str:
    """The subject pattern of ``question``, PostgreSQL classes read as Python's."""
    pattern = asked_about(question, question, ())[1]
    return pattern.replace("[[:space:]]", r"\s").replace("[:alnum:]", "A-Za-z0-9")


def test_a_question_of_two_people_is_about_each_of_them() -> None:
    # "我爸妈": each parent's memory; "我和我老婆": the speaker's own facts too.
    parents = _about("我爸妈身体都有什么问题？")
    assert re.search(parents, "我爸有糖尿病") and re.search(parents, "我妈去年做了手术")
    both = _about("我和我老婆身上都有啥毛病？")
    assert re.search(both, "我有腰椎间盘突出") and re.search(both, "老婆膝盖不好")
    assert not re.search(both, "我妈有高血压")
    alone = _about("我老婆身体怎么样？")
    assert not re.search(alone, "我有腰椎间盘突出")


@pytest.mark.parametrize(
    ("question", "subject"),
    [
        ("我在哪家医院哪个科？", ()),  # the asker's own: a hospital is the answer
        ("我老公在哪家公司上班？", ("老公",)),
        ("我住在哪个小区", ()),
    ],
)
def test_the_noun_a_question_asks_which_one_of_is_no_subject(
    question: str, subject: tuple[str, ...]
) -> None:
    assert subject_words(question, asked(question)) == subject
    if not subject:
        assert refers(question) == ()  # nothing described: no second search


def test_a_doubled_pet_name_is_a_subject_and_a_day_of_the_week_is_asked() -> None:
    assert analyse("乐乐英语课是周几").asked == ("time",)
    assert "乐乐" in analyse("乐乐英语课是周几").subject
    assert "天天" not in analyse("我天天几点起床").subject


def test_the_sounds_of_the_subject_are_asked_too() -> None:
    assert analyse("朵朵的游勇课是几点的").subject_sounds == "'duoduo':B | 'youyong':B"
    assert analyse("我的 jita 是什么牌子的？").subject_sounds == "'jita':B"
    assert analyse("How old is my landlord?").subject_sounds == ""


@pytest.mark.parametrize(
    ("text", "attribute"),
    [
        ("男朋友是做平面设计的，天天加班", "occupation"),
        ("老伴以前是搞桥梁设计的", "occupation"),
        ("我的经理是个广州人，说话特别快", "hometown"),
        ("我33，在杭州上班", "age"),
        ("我今年67了，住了一辈子哈尔滨", "age"),
    ],
)
def test_an_attribute_as_users_state_it(text: str, attribute: str) -> None:
    assert attribute in stated(text)


@pytest.mark.parametrize(
    "question", ["我爹靠什么营生？", "我爸妈做的是啥买卖？", "他现在靠什么吃饭？"]
)
def test_a_living_asked_in_everyday_words_asks_the_occupation(question: str) -> None:
    assert asked(question)[0] == "occupation"


def test_a_person_asked_by_a_broader_or_another_word_meets_the_memorys_word() -> None:
    # 对象 covers a boyfriend or a girlfriend; 老爸 is the 爸 of "我爸…" (full text).
    terms = analyse("我对象是干哪行的？").cjk_any[0]
    assert "'男朋友'" in terms and "'女朋友'" in terms
    assert "'爸'" in analyse("我老爸在外地做啥工作？").cjk_any[0]


def test_a_question_of_the_speaker_is_not_answered_by_a_relatives_fact() -> None:
    # "我在哪家公司上班？": the speaker's employer, not the one a relative's memory names.
    mine = _about("我在哪家公司上班？")
    assert re.search(mine, "在一家做游戏的公司上班，入职一年了")
    assert re.search(mine, "我今年26，在南山一家设计公司")
    assert not re.search(mine, "我爸在电厂上班，快退休了")
    assert not re.search(mine, "闺女在银行上班")
    assert not re.search(_about("Where do I work?"), "My wife works at the bank", re.I)
    # A pronoun points at someone else: no speaker-only subject.
    for question in ("她今年多大？", "他在哪上班？", "What is her phone number?", "咱家住哪？"):
        assert asked_about(question, question, ())[1] != _about("我在哪家公司上班？"), question
    assert not re.search(mine, "老公在银行上班") and re.search(mine, "老公司搬到了滨江")


def test_a_bare_number_is_an_age_only_after_a_person() -> None:
    assert "age" in stated("表姐周敏，36，在银行做柜员")
    for text in ("午饭吃的牛肉面，25", "打车回家，38", "考试成绩出来了，92"):
        assert "age" not in stated(text), text


def test_the_two_sides_of_a_comparison() -> None:
    assert [s for s, _ in sides("我家老二比老大小几岁？")] == ["老二", "老大"]
    assert [s for s, _ in sides("我比小高大几岁？")] == ["我", "小高"]
    assert sides("我比较早的时候住在哪？") == ()  # "比较" compares nothing


def test_a_relatives_word_inside_another_relatives_is_not_the_subject() -> None:
    # 媳妇 is not the 儿媳妇 (a daughter-in-law), 姐 not the 表姐.
    pattern = asked_about("我媳妇在哪儿上班？", "我媳妇在哪儿上班？", [])[1]
    assert re.search(pattern, "老婆在超市当理货员")
    assert not re.search(pattern, "儿媳妇在医院当药剂师")


@pytest.mark.parametrize(
    ("question", "memory", "name"),
    [
        # The description is said of 她; who she is was named in the clause before.
        ("那个教数学的表妹平时爱干啥？", "上周跟小琳吃了顿饭，她在二中教数学", "小琳"),
        # No name: the relative the memory opens with is who is meant.
        ("在深圳当律师的那个孩子几岁了？", "闺女在深圳当律师，忙得很", "闺女"),
        ("在云南当兵的那个人老家是哪的？", "我哥在云南当兵，一年回来一次", "我哥"),
    ],
)
def test_a_described_person_is_named_as_the_memory_names_them(
    question: str, memory: str, name: str
) -> None:
    found = names_given(refers(question), [memory], question)
    assert [n.text for n in found] == [name]


def test_a_described_thing_is_not_named_by_the_relative_a_memory_opens_with() -> None:
    # "那个馆子" is a thing: 儿子 of "儿子在西安开出租" is no name for it.
    question = "我那个馆子开在西安哪块？"
    assert names_given(refers(question), ["儿子在西安开出租，不想接我的店"], question) == ()


def test_a_relative_named_for_a_description_is_not_someone_elses() -> None:
    (found,) = names_given(refers("在深圳当律师的那个孩子几岁了？"), ["儿子在深圳当律师"], "")
    assert found.named_in("儿子今年三十了")
    assert not found.named_in("老赵说他儿子在深圳开公司")


@pytest.mark.parametrize(
    ("query", "latest"),
    [
        ("团建最后几点集合？", True),
        ("考级改到哪天了", True),
        ("我们现在房租多少？", True),
        ("Where did we end up going for the offsite?", True),
        ("考级原来定在哪天？", False),
        ("后来改了，一开始定的是哪天？", False),
        ("What was the original date?", False),
        ("萱萱的钢琴老师姓什么？", False),
    ],
)
def test_a_question_about_what_holds_in_the_end(query: str, latest: bool) -> None:
    assert asks_latest(query) is latest


@pytest.mark.parametrize(
    ("query", "attribute"),
    [
        ("孩子在哪念的高中？", "education"),
        ("他在哪儿上的大学？", "education"),
        ("我在哪上班？", "employer"),
    ],
)
def test_where_one_studies_is_asked_as_education_not_a_place(query: str, attribute: str) -> None:
    assert asked(query) == (attribute,)


def test_a_product_chosen_changes_a_fact_only_where_it_gives_up_the_old_value() -> None:
    def kinds(old: str, new: str) -> tuple[set[str], set[str]]:
        return product_topics(old), product_topics(new)

    old, new = "我们组每周一开周会", "周会不用钉钉了，改用飞书"  # the day stands
    assert judge(old, new, kinds(old, new)) is None
    old, new = "我们的知识库用Confluence", "知识库不用Confluence了，改用飞书文档"
    assert judge(old, new, kinds(old, new)) is not None
