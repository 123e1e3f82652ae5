"""Which attribute a memory states and which one a question asks for (age, job, home …), by concept.

A person's memories hold several facts about the same few subjects: "我堂哥今年四十岁",
"我堂哥老家是成都的", "我堂哥在工地当电工". The words of "我堂哥今年多大？" meet all
three on 堂哥; what tells the answer apart is the *attribute*: the question asks an
age, and only one memory states one. Words alone miss it ("多大" is not "四十岁").

Each attribute here is a concept with two faces, in Chinese and English:

* ``asks``: how a question asks for it ("多大", "几岁", "年纪", "how old");
* ``states``: how a statement gives it — its value's shape ("四十岁", "79年的",
  "turned 67") and the words that name it ("年龄", "age").

The lexicons are per attribute, not per sentence: a new sentence about an age is
found by the age's shapes, whatever else it says. :func:`stated` is stored with a
memory when it is written; :func:`asked` is read from a query when it is searched.
The ranking uses the pair as a soft signal (a memory stating the asked attribute
of the asked subject ranks above other facts about that subject); the change
decision uses :func:`stated` to tell a new value of the same attribute from a
different fact about the same subject.

Pure functions, no I/O; nothing here imports from the rest of the package.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache

from memory_pg._segment import EN_STOPWORDS, segment

#: The commonest Chinese surnames: 老 / 小 and one of them name a person (老张, 小周), as
#: does one of them before a title (何老师).
SURNAMES = (
    "张王李赵刘陈杨黄周吴徐孙马朱胡郭何林高罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡余杜叶程"
    "苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛"
    "郝龚邵万钱严覃武戴莫孔向汤"
)
#: A number written with digits or Chinese numerals.
_N = r"(?:\d+(?:\.\d+)?|[零〇一二两三四五六七八九十百千万几]+)"
#: English number words (counts, ages): "forty", "sixty-seven".
_EN_N = (
    r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
    r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|"
    r"sixty|seventy|eighty|ninety)(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?"
)
#: Occupations, as nouns: a statement that someone is one of these gives a job.
_JOBS_ZH = (
    "医生|大夫|护士|药剂师|牙医|老师|教师|教授|讲师|班主任|辅导员|校长|工程师|程序员|码农|架构师|"
    "设计师|产品经理|项目经理|经理|主管|总监|总经理|老板|店长|组长|科长|处长|主任|主编|厨师|大厨|司机|电工|水电工|木工|"
    "瓦工|焊工|保安|保洁|保姆|月嫂|销售|会计|出纳|财务|审计|律师|法官|检察官|警察|民警|消防员|"
    "公务员|记者|编辑|作家|翻译|导游|教练|健身教练|模特|演员|歌手|主播|博主|摄影师|画家|"
    "快递员|外卖员|骑手|服务员|收银员|客服|运营|人事|HR|前台|文员|秘书|助理|研究员|科学家|"
    "军人|农民|工人|技术员|实习生|学生|研究生|博士生|个体户|自由职业|创业|包工头|装修工|"
    "理发师|美容师|按摩师|护工|快递|网约车|出租车|建筑师|咨询师|分析师|顾问|董事长"
)
_JOBS_EN = (
    r"doctor|physician|surgeon|nurse|pharmacist|dentist|teacher|professor|lecturer|tutor|"
    r"principal|engineer|developer|programmer|architect|designer|manager|director|"
    r"executive|founder|owner|chef|cook|baker|driver|electrician|plumber|carpenter|mechanic|"
    r"technician|accountant|auditor|lawyer|attorney|judge|police officer|officer|firefighter|"
    r"journalist|reporter|editor|writer|author|translator|interpreter|guide|coach|trainer|"
    r"model|actor|actress|singer|musician|artist|painter|photographer|barista|waiter|"
    r"waitress|cashier|clerk|receptionist|secretary|assistant|analyst|consultant|"
    r"researcher|scientist|soldier|farmer|student|intern|freelancer|contractor|"
    r"salesperson|realtor|agent|banker|pilot|veterinarian|vet|therapist|counselor|"
    r"librarian|scientist|ceo|cto|cfo"
)
_DEGREES_ZH = (
    "本科|硕士|博士|研究生|大专|专科|中专|高中|初中|小学文化|学士|学位|学历|毕业|文凭|MBA|留学"
)
_DEGREES_EN = (
    r"bachelor'?s?|master'?s?|ph\.?d|doctorate|degree|diploma|graduated|graduate|"
    r"alumn(?:us|a|i)|mba|majored|high school|college|university"
)
_ZH_TIME = (
    rf"{_N}\s*[点时](?:半|{_N}分?)?|{_N}[:：]\d\d|点半|上午|下午|中午|晚上|早上|凌晨|傍晚|"
    # Not the "周一" of "一周一次", "每周一次" (how often, not which day).
    rf"(?<![一二两三四五六七八九十\d])周[一二三四五六日天末](?![次回遍趟])|星期[一二三四五六日天]|礼拜[一二三四五六日天]|"
    rf"{_N}月{_N}[号日]?|{_N}[号日](?![本子])|明天|后天|今晚|下周|下个月|月底|月初|年底|"
    # A holiday or a school break is a time: "国庆去厦门", "寒假回老家".
    rf"春节|过年|除夕|元旦|清明|五一(?![广路大])|端午|七夕|中秋|(?<![叫{SURNAMES}])国庆|寒假|暑假|圣诞"
)
_EN_TIME = (
    r"\d{1,2}(?::\d\d)?\s*(?:a\.?m\.?|p\.?m\.?)|\d{1,2}:\d\d|o'clock|noon|midnight|"
    r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?|weekend|tomorrow|tonight|"
    r"next (?:week|month)|january|february|march|april|may|june|july|august|september|"
    r"october|november|december|christmas|thanksgiving|easter|new year'?s?|spring break"
)
_OPINION_ZH = (
    "好吃|难吃|不错|还行|还可以|一般|凑合|很棒|挺好|很好|太好|不好|很差|太差|差劲|糟糕|失望|满意|"
    "推荐|值得|不值|划算|性价比|太贵|很贵|挺贵|偏贵|便宜|实惠|难用|好用|舒服|难受|喜欢|讨厌|"
    "踩雷|踩坑|服务|态度|环境|味道|口味|体验|印象|评价|吐槽|专业|靠谱|不靠谱|热情|冷淡|干净|脏|"
    "吵|安静|拥挤|排队|惊艳|一流|再也不|不会再去|还会再去|五星|差评|好评"
)
_OPINION_EN = (
    r"great|good|bad|terrible|awful|amazing|excellent|fantastic|decent|okay|ok|mediocre|"
    r"overpriced|pricey|cheap|worth|recommend(?:ed)?|disappoint(?:ed|ing)|love[ds]?|hated?|"
    r"delicious|tasty|bland|rude|friendly|clean|dirty|noisy|quiet|crowded|favorite|"
    r"favourite|best|worst|enjoy(?:ed)?|not impressed|impressed|review"
)


@dataclass(frozen=True)
class Attribute:
    """One attribute: its name, how a question asks for it, how a statement gives it."""

    name: str
    asks: re.Pattern[str]
    states: re.Pattern[str]


def _attr(name: str, asks: str, states: str) -> Attribute:
    return Attribute(name, re.compile(asks, re.IGNORECASE), re.compile(states, re.IGNORECASE))


#: The attributes, most specific first (an age question is not a time question).
ATTRIBUTES: tuple[Attribute, ...] = (
    _attr(
        "name",
        r"叫什么|叫啥|叫甚么|什么名字|啥名字|名字是|名字叫|怎么称呼|怎么叫|姓什么|姓啥|贵姓|全名|"
        r"\bwhat(?:'s| is| was| are)\b(?=[^?]*\bname)|\bname of\b|\bcalled what\b|\bnamed what\b|"
        r"\bwhat do (?:i|we|you|they) call\b|\bwho is (?:my|our|the)\b",
        r"叫[\u4e00-\u9fffA-Za-z]|名字|姓[\u4e00-\u9fff]|称呼|外号|绰号|昵称|大名|小名|"
        # "老师是何老师", "班主任是杨老师": who someone is, by surname and title.
        rf"是[{SURNAMES}](?:老师|医生|大夫|师傅|律师|教练|阿姨|经理|主任|总)|"
        r"\bnamed\b|\bcalled\b|\bname(?:'s| is| was)\b|\bnickname\b|\bgoes by\b",
    ),
    _attr(
        "age",
        # (With the south-west's "好大岁数" and the polite 高寿, 贵庚.)
        r"多大|几岁|年纪|年龄|多少岁|好大岁数|好大年纪|好大了|岁数|高寿|贵庚|"
        r"哪年生|哪年出生|属什么|属啥|\bhow old\b|\bage\b|"
        r"\bwhat year was\b.*\bborn\b",
        rf"{_N}\s*(?:周)?岁|岁了|今年\s*(?:[二三四五六七八九]?十[一二三四五六七八九]?|\d{{1,2}})整?(?=[了，,。！!；;\s]|$)|"
        # "我33，在杭州…", "我38了": a person and a bare number of years.
        r"(?:^|[，,。；;！!])\s*我[爸妈哥姐弟妹]?\s*[1-9]\d(?=了?[，,。！!；;]|了?$)|"
        r"(?<=[爸妈哥姐弟妹婆公爷奶])\s*[二三四五六七八九]十[一二三四五六七八九]?(?=[，,。！!；;]|$)|(?<![第\d])[二三四五六七八九]十[一二三四五六七八九]?(?:了|出头|多了)|[一二三四五六七八九十]零后|\d0后|年纪|年龄|属[鼠牛虎兔龙蛇马羊猴鸡狗猪]|"
        rf"\d\d年(?:的|生)|快{_N}了|奔{_N}|\b{_EN_N}[- ]years?[- ]old\b|\baged? {_EN_N}\b|"
        rf"\bturn(?:ed|s|ing)? {_EN_N}\b|\bin (?:his|her|their|my) (?:twenties|thirties|"
        r"forties|fifties|sixties|seventies|eighties)\b|\byears? old\b",
    ),
    _attr(
        "birthday",
        r"生日|哪天出生|几号出生|几月几号生|出生日期|\bbirthday\b|\bwhen was\b.*\bborn\b|"
        r"\bdate of birth\b",
        r"生日|出生|诞辰|\bbirthday\b|\bborn on\b|\bborn in (?:january|february|march|april|may|"
        r"june|july|august|september|october|november|december)\b",
    ),
    _attr(
        "education",
        r"学历|毕业于|哪毕业|哪里毕业|哪儿毕业|什么学校|哪个学校|哪间学校|哪所|哪个大学|什么大学|读的什么|"
        r"学的什么|学什么的|什么专业|啥专业|学的啥|读的啥|读啥|专业是|读过书|文化程度|几年级|哪个年级|上几年级|读几|读到|\bdegree\b|\bgraduat|\bschool\b|"
        # Where one studies: "在哪念的高中", "哪儿上的大学", "在哪读书".
        r"哪[里儿]?(?:念|读|上)的?(?:书|学|高中|初中|中学|小学|大学|研)|"
        r"\bcollege\b|\buniversity\b|\bmajor\b|\bstud(?:y|ied)\b|\beducation\b",
        rf"{_DEGREES_ZH}|大学|学院|读书(?!会)|念书|读研|读博|专业|考上|年级|[高初大][一二三四](?![十百千万岁个])|"
        # A school by its number or kind: "兰州一中", "实验小学", "职高".
        r"[一二三四五六七八九十\d]+中(?![文国午心间])|中学|小学(?!文化)|职高|技校|"
        r"在[\u4e00-\u9fff]{2,10}[读念](?![报者])|"
        # A discipline studied or wanted: "想学临床医学", "读的是汉语言文学".
        r"(?:学|读|念|修|考)(?:的是)?[\u4e00-\u9fff]{0,6}(?:医学|文学|法学|数学|物理|化学|生物|工程|"
        r"管理|设计|技术|科学|经济|金融|会计|计算机|外语|新闻)|"
        r"研[一二三]|幼儿园|[大中小]班|\b(?:{_DEGREES_EN})\b|"
        r"\bstudied\b|\bmajor(?:ed)? in\b",
    ),
    _attr(
        "occupation",
        r"干什么的|做什么的|干啥的|做啥的|什么工作|啥工作|干哪行|哪一行|做哪行|职业|干什么工作|"
        r"做什么工作|从事什么|是干嘛的|干嘛的|当什么|什么职位|做什么生意|"
        r"营生|(?:什么|啥|哪种|哪门)(?:买卖|生意|行当)|谋生|靠什么(?:吃饭|过活|养家)|"
        r"\bwhat does\b(?=[^?]*\bdo\b)|\bwhat do\b(?=[^?]*\bdo for\b)|"
        r"\b(?:job|occupation|profession|career|line of work)\b|\bwork as\b",
        rf"当(?:了|过)?[\u4e00-\u9fff]{{0,4}}(?:{_JOBS_ZH})|"
        r"在(?![家群网])[\u4e00-\u9fffA-Za-z]{1,10}(?:做|当|干|教(?![室练学堂会我你他她]))[\u4e00-\u9fffA-Za-z]|"
        rf"(?:{_JOBS_ZH})|职业|职位|岗位|职务|头衔|工作是|开了?(?:一?家|个)|"
        r"跑(?:滴滴|外卖|快递|出租|网约车)|做(?:生意|买卖|销售|设计|开发|运营)|"
        # A living by what one does: on the land, at sea, in a lab, at a stall.
        r"种地|种田|务农|种菜|种果树|养(?:了)?[\d一二三四五六七八九十几百]*[多头只箱]*(?:猪|牛|羊|鸡|鸭|鱼|蜂)|"
        r"打鱼|捕鱼|跑船|跑远洋|开(?:了)?(?:一辈子)?船|出海|搞科研|做科研|搞研究|做研究|"
        r"摆摊|摆地摊|卖菜|开店|打零工|跑运输|跑业务|"
        # A business run or a subject taught: "开五金店", "在实验小学教语文".
        r"开(?:了)?(?:一?[家个间])?(?![车着会过])[\u4e00-\u9fff]{0,4}(?<![去到回进里])(?:店|厂|馆|铺|超市|诊所|作坊|工作室|饭店|餐厅)|"
        r"教(?:书|语文|数学|英语|物理|化学|生物|历史|地理|政治|体育|音乐|美术|钢琴|舞蹈)|"
        # Driving for a living: "开了三十二年火车", "开出租".
        r"开(?:了)?(?:[\d一二三四五六七八九十几]+年)?(?:的)?(?:火车|出租车?|公交车?|货车|大车|卡车|地铁|"
        r"大巴|客车|班车|网约车|滴滴|挖掘机|吊车|叉车)|"
        # A route run for a living: "跑的是丽江线", "跑长途".
        r"跑(?:的是)?[\u4e00-\u9fff]{1,4}线|跑长途|"
        # "是做室内设计的", "以前是搞桥梁设计的": what one does for a living.
        r"是(?:做|搞|干|教)(?!净|笑|洗|嘛|啥|什么)(?:(?!的)[\u4e00-\u9fff]){1,6}的(?=[，,。！!；;]|$)|"
        rf"\b(?:{_JOBS_EN})s?\b|\bworks? (?:as|in)\b|\bjob\b|\bprofession\b|\bteach(?:es)?\b|"
        r"\bjob title\b|\btitle is\b|\bmy (?:title|position|role)\b|"
        r"\bruns? (?:a|an)\b(?! (?:half|full|marathon|race|5k|10k|mile|test|script|errand))|"
        # A career changed says what the job is now: "辞了教职", "转行了", "got promoted".
        r"辞职|辞了|转行|跳槽|离职|升职|晋升|被裁|\bpromoted\b|\bquit (?:my|the) job\b"
        r"|\bleft (?:my|the|his|her) (?:job|company|firm|position)\b",
    ),
    _attr(
        "employer",
        r"在哪(?:里|儿|个|家|间|所)?[\u4e00-\u9fff]{0,3}?(?:上班|工作|干活|打工|做事|高就|任职|实习|教书|任教)|"
        r"哪(?:家|个)公司|什么公司|啥公司|单位|"
        r"\bwhere does\b(?=[^?]*\bwork\b)|\bwhere do\b(?=[^?]*\bwork\b)|\bemployer\b|"
        r"\bwhich company\b|\bwhat company\b|\bwork(?:s)? for\b|\bwork(?:s)? at\b",
        # An organisation, not as a landmark ("公司楼下那家店", "在医院门口"): an employer.
        r"(?:公司|单位|集团|银行|医院|学校|厂)(?!附近|楼下|楼上|旁边|门口|对面|边上|隔壁|周边)|"
        r"上班|任职|入职|跳槽|工作|实习|加入了?|总部|分公司|办公室|员工|"
        r"\bworks? (?:at|for)\b|\bjoined\b|\bemploy|\bcompany\b|\bhired\b|\bstart(?:ed|s) at\b",
    ),
    _attr(
        "hometown",
        r"老家|哪里人|哪儿人|什么地方人|哪的人|籍贯|家乡|祖籍|出生在哪|在哪出生|在哪长大|"
        r"\bwhere\b(?=[^?]*\bfrom\b)|\bhometown\b|\bgrew up\b|\bwhere was\b(?=[^?]*\bborn\b)",
        r"老家|籍贯|家乡|祖籍|出生在|出生于|长大|[\u4e00-\u9fff]{2,4}人[，,。.]?$|"
        r"\bfrom\b|\bhometown\b|\bgrew up\b|\bborn in\b|\bnative\b",
    ),
    _attr(
        "home",
        r"住(?:在)?哪|住哪儿|住什么地方|住的地方|住处|家在哪|住址|地址|门牌|哪个小区|什么小区|家住|"
        r"\bwhere does\b(?=[^?]*\blive\b)|\bwhere do\b(?=[^?]*\blive\b)|\baddress\b|\blive\b",
        r"住(?:在|的)?|小区|家在|公寓|租了|租的|房子|搬到|搬去|搬家|门牌|号楼|单元|地址|定居|安家|"
        r"\blive[sd]?\b|\bliving\b|\baddress\b|\bapartment\b|\bflat\b|\bmoved to\b|\bhouse\b|"
        # A home rented or bought, or named as a key: "rent a studio", "买了房", "home: Lyon".
        r"\brent(?:s|ing)? (?:a|an|the|our|my)\b|"
        r"\bbought (?:a|our|my) (?:house|home|place|condo)\b|"
        r"\bhome\s*[:：—-]|\bmy home\b|买了?房|"
        r"\bbased in\b|\brelocated\b",
    ),
    _attr(
        "phone",
        r"电话|手机号|号码|联系方式|怎么联系|微信号|\bphone\b|\bnumber\b|\bcell\b|\bmobile\b|"
        r"\bcontact\b|\breach\b",
        r"电话|手机|号码|微信|\d{3}[- ]?\d{3,4}[- ]?\d{4}|1[3-9]\d{9}|\bphone\b|\bnumber\b|"
        r"\bcell\b|\bmobile\b|\bcall\b",
    ),
    _attr(
        "email",
        r"邮箱|邮件地址|电子邮件|\be-?mail\b",
        r"邮箱|邮件|@[A-Za-z0-9-]+\.|\be-?mail\b",
    ),
    _attr(
        "diet",
        r"过敏|忌口|不能(?:吃|用|碰|喝)|不吃什么|要避开|避开|忌|吃素|饮食|\ballerg|\bdiet\b|\bvegetarian\b|\bvegan\b|"
        r"\bcan'?t eat\b|\bcannot eat\b|\bintoleran",
        r"过敏|忌口|不能吃|不吃|吃素|素食|全素|戒了|无麸质|乳糖|吃(?:肉|鱼|辣|素|海鲜|甜|糖|主食)|"
        r"\b(?:eat|eats|ate|eating|drink|drinks)\s+(?:no\s+)?(?:meat|fish|pork|beef|chicken|seafood|"
        r"dairy|eggs|sugar|carbs|alcohol|coffee|wine|beer|milk)\b|\ballerg|\bvegetarian\b|\bvegan\b|"
        r"\bgluten\b|\blactose\b|\bintoleran|\bdon'?t eat\b|\bkosher\b|\bhalal\b|\bdiet\b",
    ),
    _attr(
        "health",
        r"身体|健康|毛病|病|体检|检查结果|血压|血糖|怎么了|哪里不舒服|\bhealth\b|\bsick\b|\bill\b|"
        r"受(?:了|过)?(?:啥子|什么|啥|哪样)?伤|伤(?:到|了|在)哪|"
        r"\bdiagnos|\bcondition\b|\bcheck-?up\b",
        r"病|血压|血糖|手术|住院|体检|确诊|诊断|吃药|感冒|发烧|骨折|疼|痛|医院|复查|指标|偏高|偏低|"
        # An injury or a finding named: "手腕骨裂", "牙结石", "腰椎间盘膨出", "半月板磨损".
        r"受伤|伤了|骨裂|扭伤|拉伤|石膏|结石|发炎|[\u4e00-\u9fff]炎|膨出|突出|磨损|结节|囊肿|息肉|中风|"
        # A part of the body not well: "膝盖也不好", "腰不行了", "胃不舒服".
        r"(?:膝盖|腰|颈椎|腰椎|胃|肝|肺|心脏|眼睛|牙|腿|脚|肩膀?|关节|嗓子|皮肤)[也都又还]?"
        r"(?:不好|不行|不舒服|有问题|受伤|发炎|出了?问题)|"
        r"\bdiagnos|\bsurgery\b|\bblood pressure\b|\bdiabet|\bsick\b|\bflu\b|\bfever\b|"
        r"\binjur|\bbroke (?:his|her|my)\b|\bhospital\b|\bmedication\b|\bcheck-?up\b",
    ),
    _attr(
        "body",
        r"多高|身高|个子|多重|体重|多胖|多瘦|\bhow tall\b|\bheight\b|\bweigh",
        rf"一米[一二三四五六七八九]|{_N}\s*(?:米[一二三四五六七八九\d]|厘米|公分|cm|斤|公斤|kg)|身高|个子|体重|"
        r"\b\d+\s*(?:cm|kg|lbs?|pounds)\b|\b\d'\s*\d{1,2}\b|\btall\b|\bweighs?\b",
    ),
    _attr(
        "score",  # an exam's: "考了多少分", "成绩出来了，72"; points in an exam's clause only
        r"多少分|几分(?!钟)|考(?:了|得)多少|考得(?:怎么样|咋样|如何|好不好)|成绩|分数|得分|第几名|排第几|"
        r"\bscored?\b|\bgpa\b|\bmarks\b",
        rf"(?:考|测|试|成绩|期中|期末|模)[^，,。！!；;]{{0,12}}?(?<![点:：\d]){_N}\s*分(?![钟之])|"
        rf"成绩|分数|得分|满分|出分|总分|及格|挂科|(?:拿|考|得|排)了?(?:全班|全校|年级|班级|班上|班里)?第{_N}|"
        rf"考(?:了|到|出)[^，,。！!]{{0,6}}?{_N}(?![次回遍天年个门周月])|\bscored?\b|\bgpa\b",
    ),
    _attr(
        "price",
        r"花了?多少钱?|多少钱|价格|价钱|贵不贵|月租|租多少|费用|收费|多少费|租金|房租|工资|薪水|月薪|年薪|薪资|"
        r"[挣赚]了?多少|收入多少|"
        # What was spent or bought: "花过哪些钱", "买过些啥", "报过什么班".
        r"花(?:过|了)?(?:哪些|什么|啥)钱|花过哪些|开销|花销|花费|[买报](?:过|了)(?:些|点)?(?:啥|什么|哪些)|"
        r"预算|多少块|\bhow much\b|\bcost\b|\bprice\b|\bsalary\b|\bfee\b|\brent\b|\bpay\b|"
        r"\bbudget\b|\bpaid\b",
        rf"{_N}\s*(?:元|块|万(?!公里|里|步|人|字|次|粉|平|多人)|千(?!米|克|公里|步|字)|刀|美元|欧|镑)|[￥¥$€£]\s*\d|钱|价格|工资|月薪|年薪|租金|房租|"
        r"费用|收费|预算|学费|"
        # An amount spent, with or without its unit: "花了九百二", "买了个护腰，淘宝上二百六十八".
        rf"花了?(?:大概|差不多|将近)?{_N}|[买报换交付订租办充修请]了[^，,。]{{0,12}}[，,]\s*(?:[\u4e00-\u9fff]{{1,4}}上)?{_N}(?=[。！!]|$)|"
        # A number right after a verb of paying or charging ends its clause: "医院收了900",
        # "风扇修了350" (not "修了一个礼拜": a duration goes on).
        rf"(?:收|付|交|缴|充|修|赔|退|补)了{_N}(?:块|元)?(?=[，,。！!；;\s]|$)|"
        r"\brent\b|\bsalary\b|\bcosts?\b|\bpaid\b|\bprice[ds]?\b|\bdollars?\b|"
        r"\bbucks\b|\bbudget\b|\bfee\b|\d+k\b",
    ),
    _attr(
        "count",
        r"几个|几只|几位|几辆|几套|几次|几口|多少个|多少人|多少只|多少次|\bhow many\b",
        rf"{_N}\s*(?:个|只|位|辆|套|次|口|条|本|台|家|名|人)|\b{_EN_N}\b",
    ),
    _attr(
        "time",
        r"几点|什么时候|啥时候|哪天|几号|哪一天|什么时间|时间是|日期|何时|多久|(?:周|礼拜|星期)几|"
        r"哪个月|几月|\bwhen\b|"
        r"\bwhat time\b|\bwhat day\b|\bwhich day\b|\bwhat date\b|\bhow long\b",
        rf"{_ZH_TIME}|\b(?:{_EN_TIME})\b",
    ),
    _attr(
        "place",
        r"在哪(?:里|儿)?(?:办|举行|举办|开|见面|吃|玩|集合|碰头)?|地点|什么地方|哪个地方|去哪|"
        r"\bwhere\b|\bwhich (?:city|place|venue|restaurant|hotel)\b|\bvenue\b",
        r"在[\u4e00-\u9fff]{2,12}(?:办|举行|举办|开|见面|集合)|地点|地址|酒店|餐厅|会议室|公园|"
        r"位于|坐落|[开设]在|在[\u4e00-\u9fff]{1,10}(?:附近|旁边|对面|那边|这边|楼下|楼上|门口|边上)|"
        r"体育馆|中心|广场|大厦|路|街|\bvenue\b|\b(?:at|in) (?:the )?(?-i:[A-Z][a-z]+)",
    ),
    _attr(
        "opinion",
        r"怎么样|怎样|如何|好不好|评价|口碑|值不值|好吃吗|好玩吗|推荐吗|感觉|印象|"
        r"\bhow (?:was|is|were|are|did)\b|\bany good\b|\bwhat did\b(?=[^?]*\bthink\b)|"
        r"\bwhat do\b(?=[^?]*\bthink\b)|\bopinion\b|\breview\b|\bworth\b|\blike it\b",
        rf"{_OPINION_ZH}|\b(?:{_OPINION_EN})\b",
    ),
    _attr(
        "preference",
        r"喜欢什么|喜欢啥|喜欢哪|爱吃什么|爱喝什么|爱看什么|爱玩什么|最爱|偏好|口味|爱好|兴趣|"
        r"\bfavou?rite\b|\bprefer\b|\bwhat does\b(?=[^?]*\blike\b)|\bwhat do\b(?=[^?]*\blike\b)|"
        r"\bhobb(?:y|ies)\b|\binto\b",
        r"喜欢|爱吃|爱喝|爱看|爱玩|最爱|偏爱|偏好|热爱|迷上|讨厌|不喜欢|受不了|爱好|兴趣|"
        r"\bfavou?rite\b|\blove[sd]?\b|\benjoy|\bprefer|\bhate[sd]?\b|\bfan of\b|\binto\b|"
        r"\bhobb(?:y|ies)\b|\b(?:i|we|he|she|they|you)\s+(?:really\s+)?like\b|\blike[sd]\b",
    ),
    _attr(
        "tool",
        r"用(?:的)?(?:是)?(?:什么|啥|哪)|什么数据库|什么框架|什么语言|什么工具|什么软件|什么牌子|什么型号|选型|技术栈|"
        r"\bwhich (?:database|framework|language|tool|library|editor|cloud|stack)\b|"
        r"\bwhat (?:database|framework|language|tool|library|editor|cloud|stack)\b|"
        r"\bwhat do (?:we|i|they) use\b|\bwhat (?:are|is) (?:we|i|they) using\b",
        r"使用|采用|改用|换成|选用|切换|迁到|迁移|数据库|框架|语言|工具|编辑器|软件|部署|用(?:的是)?\s*[A-Za-z]|"
        r"\buse[sd]?\b|\busing\b|\bswitched\b|\bmigrated\b|\bstack\b|\bbuilt (?:on|with)\b|"
        r"\bruns? on\b|\bhosted on\b",
    ),
)

_BY_NAME = {a.name: a for a in ATTRIBUTES}

#: What answers a question for an attribute besides the attribute itself: "what does
#: he do?" is answered by "he works at a bank", "how old?" by "born in 1979".
ANSWERED_BY: dict[str, tuple[str, ...]] = {
    "occupation": ("occupation", "employer"),
    "employer": ("employer", "occupation"),
    "age": ("age", "birthday"),
    "birthday": ("birthday", "age"),
    "home": ("home", "place"),
    "phone": ("phone", "email"),
    "email": ("email", "phone"),
}

#: Attributes whose question words are too general to ask alone: "where" asks for a
#: place unless a more specific attribute (home, hometown, employer) asked first.
_SHADOWED = {
    "place": ("home", "hometown", "employer", "education"),
    "time": ("age", "birthday"),
    "occupation": ("employer",),
    "count": ("age",),
    "opinion": ("health", "score"),
}

#: A query asks something: a question mark, or a question word of either language.
_ASKING = re.compile(
    r"[?？]|什么|啥|哪|几|多少|多大|怎么|如何|谁|吗|呢|是否|有没有|"
    r"^\s*(?:who|what|which|where|when|how|why|whose|is|are|was|were|do|does|did|can|could"
    r"|tell me|remind me)\b",
    re.IGNORECASE,
)


#: Attributes one holds several values of, or that many facts give (a count, a time, a
#: place, an opinion): two texts stating one say little of being about one thing.
LOOSE = frozenset(
    {"count", "time", "place", "opinion", "preference", "tool", "diet", "health", "price", "score"}
)


@lru_cache(maxsize=4096)
def stated(text: str) -> tuple[str, ...]:
    """The attributes ``text`` states, in :data:`ATTRIBUTES` order.

    Example:
        >>> stated("我堂哥今年四十岁")
        ('age',)
    """
    text = _SPACED.sub("", text)  # "5 月 10 日": a space between a digit and a unit
    found = tuple(
        a.name
        for a in ATTRIBUTES
        if a.states.search(text)
        or (a.name == "hometown" and _from_place(text))
        or (a.name == "age" and _bare_age(text))
    )
    if "health" in found and "employer" in found:
        # A hospital named with an illness is where one was treated ("在县医院开了药"),
        # unless the text says work there too ("在县医院上班").
        rest = _CARE_PLACE.sub("", text)
        if _BY_NAME["health"].states.search(rest) and not _BY_NAME["employer"].states.search(rest):
            found = tuple(a for a in found if a != "employer")
    return found


#: "男朋友陈昊，28，在…", "闺女在广州，42了": a clause that is a number of years, after a
#: person named before it (not "午饭吃的牛肉面，25").
_BARE_YEARS = re.compile(r"[，,]\s*[1-9]\d\s*了?(?=[，,。！!；;]|$)")
#: Who else than a relative a note may be of: a partner, a friend, a colleague, a role.
OTHER_PEOPLE = (
    "男朋友|女朋友|男票|女票|对象|未婚夫|未婚妻|前夫|前妻|朋友(?!圈)|闺蜜|同学|同事|室友|舍友"
    "|邻居|领导|上司|老板|组长|房东|师傅|客户|老师"
)
_PERSON_WORDS = re.compile(
    r"老婆|老公|媳妇|爱人|老伴|儿子|女儿|闺女|孙子|孙女|外孙|爸|妈|哥|姐|弟|妹|爷|奶"
    r"|舅|姨|叔|伯|姑|婶|公公|婆婆|岳父|岳母|" + OTHER_PEOPLE
)


def _bare_age(text: str) -> bool:
    m = _BARE_YEARS.search(text)
    if m is None:
        return False
    before = text[: m.start()]
    return bool(_PERSON_WORDS.search(before)) or any(f == "nr" for _, f in tagged(before[:12]))


#: Places of care: where one is treated as well as where one works.
_CARE_PLACE = re.compile(r"医院|诊所|卫生院|门诊|卫生所|医务室|\bhospital\b|\bclinic\b", re.I)


#: "是个香港人", "二军是周口人", "…，湖南衡阳人，…": a person of a place, where the place is a
#: place name.
_OF_PLACE = re.compile(r"(?:是(?:个)?|^|[，,。；;])\s*([\u4e00-\u9fff]{2,4})人(?=[，,。！!；;]|$)")


def _from_place(text: str) -> bool:
    """Whether ``text`` says someone is of a place ("是个香港人"; not "是个好人")."""
    # (Any word of it a place: jieba reads 桂林 of "广西桂林" as a person's name.)
    return any(flag == "ns" for m in _OF_PLACE.finditer(text) for _, flag in tagged(m.group(1)))


#: A space between a digit and a Chinese character, as many writers type it.
_SPACED = re.compile(r"(?<=\d)[ \t]+(?=[\u4e00-\u9fff])|(?<=[\u4e00-\u9fff])[ \t]+(?=\d)")


@lru_cache(maxsize=1024)
def asked(query: str) -> tuple[str, ...]:
    """The attributes a question asks for: none when ``query`` asks for no attribute
    (a statement, a topic, "what did we talk about").

    A general question word gives way to a specific one: "在哪上班" asks an employer,
    not a place.

    Example:
        >>> asked("我堂哥今年多大？")
        ('age',)
        >>> asked("我舅舅是干什么的？")
        ('occupation',)
    """
    if not _ASKING.search(query):
        return ()
    found = [a.name for a in ATTRIBUTES if a.asks.search(query)]
    return tuple(
        name for name in found if not any(other in found for other in _SHADOWED.get(name, ()))
    )


def answered_by(names: tuple[str, ...]) -> tuple[str, ...]:
    """The attributes whose statement answers a question asking for ``names``."""
    out: dict[str, None] = {}
    for name in names:
        out.update(dict.fromkeys(ANSWERED_BY.get(name, (name,))))
    return tuple(out)


@lru_cache(maxsize=1024)
def subject_words(query: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """The words of a question that say whose (or what's) attribute it asks: its
    nouns once the asking words of ``names`` are taken out ("我堂哥多大？" →
    ``("堂哥",)``; "How old is my landlord?" → ``("landlord",)``; "我那辆车花了多少钱？"
    → ``("车",)``). Empty when only the asker is left ("我多大了？"): the question is
    about the user."""
    rest = query
    for name in names:
        rest = _BY_NAME[name].asks.sub(" ", rest)
    kind = _answer_kinds(query)
    return tuple(w for w in nouns(rest) if w not in kind)


#: Words that ask which one of a kind: the noun after them is the answer's kind
#: ("我在哪家医院": a hospital is the answer, the asker the subject).
_WHICH_ZH = frozenset(
    "哪家 哪个 哪所 哪间 哪种 哪款 哪位 哪辆 哪条 哪只 哪门 哪一家 哪一个 什么 啥".split()
)
_WHICH_EN = re.compile(r"\b(?:which|what)\s+([a-z]+)", re.IGNORECASE)


def _answer_kinds(question: str) -> set[str]:
    """The nouns ``question`` asks which one of ("哪家医院" → 医院, "which city" → city)."""
    kinds = {m.group(1).lower() for m in _WHICH_EN.finditer(question)}
    for run in _CJK_RUN.findall(question):
        words = tagged(run)
        for (word, _), (after, flag) in itertools.pairwise(words):
            if word in _WHICH_ZH and flag in _NOUN_FLAGS:
                kinds.add(after)
    return kinds


@lru_cache(maxsize=1024)
def nouns(text: str) -> tuple[str, ...]:
    """The nouns of ``text`` that can name a subject: Chinese nouns by jieba's
    part-of-speech tags, with a pointing word before them taken off ("那辆车" → "车"),
    and English words that are not function or question words."""
    words = [w for w in segment(text).words if w not in EN_STOPWORDS and w not in _EN_ASKING]
    cjk: list[str] = []
    for run in _CJK_RUN.findall(text):
        for at, (word, flag) in enumerate(tagged(run)):
            noun = _POINTING.sub("", word)
            # A pet's name that opens the text, which jieba tags as a distinguishing
            # word ("大黄上回看病是啥毛病", "二黑"): the subject, by its place.
            opening = at == 0 and flag == "b" and len(word) == 2 and text.lstrip().startswith(word)
            if (
                (flag in _NOUN_FLAGS or doubled_name(word) or opening)
                and noun
                and noun not in _ZH_ASKING
            ):
                cjk.append(noun)
    return tuple(dict.fromkeys(words + cjk))


def doubled_name(word: str) -> bool:
    """Whether ``word`` is a doubled pet name ("朵朵", "乐乐", "豆豆"), which jieba tags
    as a measure word or an adjective: not a doubled count or time ("天天", "个个",
    "年年") nor an adverb ("常常", "刚刚")."""
    return (
        len(word) == 2
        and word[0] == word[1]
        and bool(_CJK_RUN.fullmatch(word))
        and word[0]
        not in "天年月日个人家次回处条件样句常刚慢好渐偏明往仅轻悄默谢看想试走聊"
        "哈嗯呵嘿哦啊呀哇嘻迟纷稍早恰统频屡万千百"
    )


def tagged(run: str) -> tuple[tuple[str, str], ...]:
    """``(word, part-of-speech tag)`` of a Chinese text, by jieba (kept for the short
    texts read again: a write's candidates, a search's best rows)."""
    return _tagged(run) if len(run) <= _KEPT else _tag(run)


#: The longest text whose tags are kept (a note, not a document).
_KEPT = 512


@lru_cache(maxsize=8192)
def _tagged(run: str) -> tuple[tuple[str, str], ...]:
    return _tag(run)


def _tag(run: str) -> tuple[tuple[str, str], ...]:
    import logging

    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    return tuple((p.word, p.flag) for p in jieba.posseg.cut(run))


#: jieba's tags of nouns: common, person, place, organisation, other proper, verbal.
_NOUN_FLAGS = frozenset({"n", "nr", "nrt", "nrfg", "ns", "nt", "nz", "nw", "vn", "ng"})
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")
#: A pointing word before a noun: "那辆车", "这家店", "我家猫".
_POINTING = re.compile(r"^(?:[那这哪][个家位只条辆所次场本部间座台件种]?|我家|我们|我)")
#: Words left of a question once its attribute's words are gone that name no subject.
_EN_ASKING = frozenset(
    "who what which where when how why whose does do did is are was were has have had "
    "now currently still again tell remind know work works live lives old name named called "
    "born from like likes think cost costs much many time day date".split()
)
_ZH_ASKING = frozenset("东西 时候 事情 情况 什么 多少 问题 方面".split())


__all__ = [
    "ANSWERED_BY",
    "ATTRIBUTES",
    "OTHER_PEOPLE",
    "Attribute",
    "answered_by",
    "asked",
    "stated",
    "subject_words",
    "tagged",
]
