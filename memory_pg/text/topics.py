"""Products and the roles they fill: the topic keys of decisions and changes
("PostgreSQL" → ``database``, "用腾讯文档做协作工具" → a role), in Chinese and English.

A lexicon with no imports from the rest of memory-pg: the extractor, the fact
patterns and the change decision read it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_GO_LANGUAGE = re.compile(r"(?<![A-Za-z0-9_])Go(?![A-Za-z0-9_])(?!\s+(?:with|ahead|to|back)\b)")
_CACHE_ROLE = re.compile(r"缓存|(?<![A-Za-z])cach(?:e|ing)(?![A-Za-z])", re.IGNORECASE)

# Topic keys: products first (a later "switched to MySQL" names the product, not the role),
# then the role nouns. Latin keywords match whole words, case-insensitively.
_PRODUCTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "database",
        (
            "postgresql",
            "postgres",
            "pg",
            "pgvector",
            "mysql",
            "mariadb",
            "mongodb",
            "mongo",
            "sqlite",
            "redis",
            "oracle",
            "sql server",
            "dynamodb",
            "cassandra",
            "clickhouse",
            "supabase",
            "tidb",
            "oceanbase",
        ),
    ),
    (
        "language",
        (
            "python",
            "golang",
            "rust",
            "java",
            "javascript",
            "typescript",
            "kotlin",
            "swift",
            "c#",
            "c++",
            "php",
            "ruby",
            "elixir",
        ),
    ),
    (
        "framework",
        ("django", "flask", "fastapi", "spring boot", "spring", "rails", "express", "nestjs"),
    ),
    (
        "frontend",
        ("react", "vue", "angular", "svelte", "next.js", "nextjs", "nuxt", "tailwind"),
    ),
    (
        "hosting",
        (
            "aws",
            "azure",
            "gcp",
            "google cloud",
            "阿里云",
            "腾讯云",
            "华为云",
            "vercel",
            "heroku",
            "netlify",
            "kubernetes",
            "k8s",
            "docker",
            "fly.io",
        ),
    ),
    ("payment", ("stripe", "paypal", "支付宝", "alipay", "微信支付", "wechat pay", "adyen")),
    (
        "llm",
        ("openai", "gpt-4o", "gpt", "deepseek", "qwen", "通义千问", "claude", "llama", "gemini"),
    ),
    ("cache", ("memcached",)),
    ("queue", ("kafka", "rabbitmq", "celery", "nats")),
    ("search", ("elasticsearch", "opensearch", "meilisearch")),
    ("mobile", ("flutter", "react native", "小程序")),
    # The things a person uses, named by product: a new one of a kind is the kind's
    # new value ("I use an iPhone 12" / "upgraded to a Pixel 8").
    (
        "phone",
        (
            "iphone",
            "苹果手机",
            "android",
            "安卓",
            "samsung",
            "三星",
            "pixel",
            "galaxy s",
            "galaxy z",
            "galaxy note",
            "华为mate",
            "华为 mate",
            "huawei mate",
            "华为p",
            "huawei p",
            "华为nova",
            "小米手机",
            "红米",
            "redmi",
            "oneplus",
            "一加",
            "oppo",
            "vivo",
            "荣耀手机",
        ),
    ),
    ("tablet", ("ipad", "galaxy tab", "matepad", "surface pro", "kindle")),
    (
        "laptop",
        (
            "macbook",
            "thinkpad",
            "xps",
            "zenbook",
            "chromebook",
            "matebook",
            "surface laptop",
            "拯救者",
        ),
    ),
    (
        "os",
        (
            "windows",
            "macos",
            "mac os",
            "ubuntu",
            "debian",
            "fedora",
            "arch linux",
            "linux mint",
            "harmonyos",
            "鸿蒙",
        ),
    ),
    (
        "editor",
        (
            "vim",
            "neovim",
            "emacs",
            "vs code",
            "vscode",
            "visual studio",
            "jetbrains",
            "intellij",
            "pycharm",
            "webstorm",
            "goland",
            "sublime text",
            "sublime",
            "xcode",
            "android studio",
        ),
    ),
    (
        "ci",
        (
            "jenkins",
            "github actions",
            "gitlab ci",
            "circleci",
            "travis ci",
            "buildkite",
            "teamcity",
        ),
    ),
    # Where code lives, where tasks are tracked, where passwords are kept.
    ("code_host", ("github", "gitlab", "bitbucket", "gitee", "码云")),
    (
        "tracker",
        ("jira", "linear", "trello", "asana", "clickup", "youtrack", "禅道", "teambition", "tapd"),
    ),
    ("passwords", ("1password", "lastpass", "bitwarden", "dashlane", "keepass", "keeper")),
    (
        "notes",
        ("evernote", "印象笔记", "obsidian", "notion", "onenote", "logseq", "有道云笔记", "语雀"),
    ),
    (
        "chat",
        ("slack", "discord", "飞书", "lark", "钉钉", "dingtalk", "企业微信", "microsoft teams"),
    ),
    (
        "car",
        (
            "tesla",
            "特斯拉",
            "model 3",
            "model y",
            "比亚迪",
            "byd",
            "bmw",
            "宝马",
            "奔驰",
            "mercedes",
            "toyota",
            "丰田",
            "honda",
            "本田",
            "civic",
            "camry",
            "prius",
            "蔚来",
            "nio",
            "小鹏",
            "xpeng",
            "奥迪",
            "audi",
            "subaru",
            "斯巴鲁",
            "mazda",
            "马自达",
            "volkswagen",
            "福特",
            "ford",
            "nissan",
            "hyundai",
            "现代汽车",
            "lexus",
            "雷克萨斯",
            "volvo",
            "沃尔沃",
        ),
    ),
)
_ROLE_NOUNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("database", ("数据库", "database", "db")),
    ("cache", ("缓存", "cache")),
    ("language", ("编程语言", "开发语言", "语言", "language")),
    ("framework", ("框架", "framework")),
    ("frontend", ("前端", "frontend", "front-end", "ui")),
    ("backend", ("后端", "backend", "back-end")),
    ("hosting", ("部署", "服务器", "云", "hosting", "cloud", "deploy", "deployment", "server")),
    ("payment", ("支付", "付款", "payment", "payments")),
    ("llm", ("大模型", "模型", "llm", "model")),
    ("queue", ("消息队列", "队列", "queue")),
    ("search", ("搜索", "search")),
    ("auth", ("登录", "认证", "鉴权", "auth", "authentication", "login")),
    ("mobile", ("移动端", "app", "mobile")),
)


#: Product names that are also ordinary English words ("last spring", "a stick of
#: celery", "cut me some slack", "clean the windows"): a product only as a proper noun,
#: with its capital.
_ORDINARY_WORDS = frozenset(
    "spring express rails celery windows linear notion slack keeper stripe swift rust "
    "ruby sublime oracle flask kindle civic asana gemini llama pixel".split()
)


def _keyword_pattern(keyword: str) -> re.Pattern[str]:
    if _CJK.search(keyword):
        return re.compile(re.escape(keyword), re.I)  # "华为Mate" as "华为mate"
    if keyword in _ORDINARY_WORDS:
        # Any case beside Chinese ("团队用slack沟通"), where the word has no English sense.
        word = "(?i:" + re.escape(keyword) + ")"
        body = keyword[0].upper() + "(?i:" + re.escape(keyword[1:]) + ")"
        return re.compile(
            r"(?<![A-Za-z0-9_])(?:(?<=[\u4e00-\u9fff])" + word + "|" + word + r"(?=[\u4e00-\u9fff])"
            "|" + body + r")(?![A-Za-z0-9_])"
        )
    return re.compile(r"(?<![A-Za-z0-9_])" + re.escape(keyword) + r"(?![A-Za-z0-9_])", re.I)


_PRODUCT_KEYWORDS = [(t, k, _keyword_pattern(k)) for t, ks in _PRODUCTS for k in ks]
_PRODUCT_PATTERNS = [(t, p) for t, _, p in _PRODUCT_KEYWORDS]
#: One product by two of its names: "Kubernetes" and "K8s" are one.
_ONE_PRODUCT = {
    "k8s": "kubernetes",
    "postgres": "postgresql",
    "golang": "go",
    "vscode": "vs code",
    "google cloud": "gcp",
}
_ROLE_PATTERNS = [(t, _keyword_pattern(k)) for t, ks in _ROLE_NOUNS for k in ks]


def _earliest(patterns: Iterable[tuple[str, re.Pattern[str]]], text: str) -> str | None:
    best: tuple[int, str] | None = None
    for topic, pattern in patterns:
        match = pattern.search(text)
        if match and (best is None or match.start() < best[0]):
            best = (match.start(), topic)
    return best[1] if best else None


def known_topic(text: str) -> str | None:
    """The topic key of the first product or role noun named in ``text``, if any.

    Example:
        >>> known_topic("我们决定使用 PostgreSQL 作为数据库")
        'database'
    """
    product = _earliest(_PRODUCT_PATTERNS, text)
    if product is None and _GO_LANGUAGE.search(text):
        product = "language"
    if product == "database" and _CACHE_ROLE.search(text):
        return "cache"  # Redis as a cache is a cache decision, not the database's
    return product or _earliest(_ROLE_PATTERNS, text)


#: A letter, digit or Han character: what is left of a qualified role noun.
_SUBSTANCE = re.compile(r"[A-Za-z0-9\u4e00-\u9fff]")


def bare_role(text: str) -> bool:
    """Whether ``text`` is a role noun and nothing more ("数据库", "database"), not one
    qualified by other words ("analytics database", "分析数据库"): a qualified role
    is one of several of its kind."""
    return _nothing_but(text, _ROLE_PATTERNS)


def names_only(text: str) -> bool:
    """Whether ``text`` is product and role nouns and nothing more ("database",
    "postgresql", "数据库"), not a topic of its own that names one ("database backup",
    "数据库备份", "frontend testing")."""
    return _nothing_but(text, (*_PRODUCT_PATTERNS, *_ROLE_PATTERNS))


def _nothing_but(text: str, patterns: Iterable[tuple[str, re.Pattern[str]]]) -> bool:
    """Whether ``text`` holds words of ``patterns`` and no other letter or digit."""
    rest = text
    for _, pattern in patterns:
        rest = pattern.sub(" ", rest)
    return rest != text and _SUBSTANCE.search(rest) is None


def product_topics(text: str) -> set[str]:
    """The topic keys of every product ``text`` names (``{"database", "cache"}``...)."""
    return set(_product_topics(text))  # a copy: callers may add to it


@lru_cache(maxsize=4096)
def _product_topics(text: str) -> frozenset[str]:
    """(One pass of every product pattern per text: a write asks it of the same text
    in :func:`memory_pg.text.changes.may_change` and in the supersession.)"""
    topics = {topic for topic, pattern in _PRODUCT_PATTERNS if pattern.search(text)}
    if _GO_LANGUAGE.search(text):
        topics.add("language")
    if "database" in topics and _CACHE_ROLE.search(text):
        topics.discard("database")
        topics.add("cache")
    return frozenset(topics)


def swapped(old: str, new: str) -> bool:
    """Whether ``new`` names a product of a kind ``old`` names, and none of ``old``'s
    products of that kind: the product is the value that changed ("Code is hosted on
    Bitbucket" / "repos all live on self-hosted GitLab now"), whatever other words
    both say."""
    for topic in product_topics(old) & product_topics(new):
        named = [(k, p) for t, k, p in _PRODUCT_KEYWORDS if t == topic]
        in_old = {_ONE_PRODUCT.get(k, k) for k, p in named if p.search(old)}
        in_new = {_ONE_PRODUCT.get(k, k) for k, p in named if p.search(new)}
        if in_new - in_old and not in_old & in_new:
            return True
    return False


def kind_words(topics: set[str]) -> set[str]:
    """The words that name these kinds of product ("editor", "编辑器", "数据库") and the
    products of them ("neovim", "飞书"): a text that names nothing else names no other
    scope."""
    return {w.lower() for t, words in (*_ROLE_NOUNS, *_PRODUCTS) if t in topics for w in words}


def product_names(topic: str) -> tuple[str, ...]:
    """The product names the extractor knows for ``topic`` (``database``: MySQL...)."""
    return next((names for t, names in _PRODUCTS if t == topic), ())


def normalize_topic(topic: str) -> str:
    """A stable topic key: lower case, blanks and punctuation as ``_``, at most 40 characters."""
    key = re.sub(r"[^\w+#.]+", "_", topic.strip().lower()).strip("_.")
    return key[:40] or "general"


def role_topic(text: str) -> str | None:
    """The topic key of the first role noun named in ``text`` ("数据库" → ``database``)."""
    return _earliest(_ROLE_PATTERNS, text)
