"""A small JSQuAD-format data set written for the tests (original text, not taken from JSQuAD).

JSQuAD (JGLUE v1.3) stores each paragraph as ``{"context": "<title> [SEP] <text>", "qas": [...]}``
with answers given as ``{"text", "answer_start"}`` offsets into the context. Here the articles
are kept as plain Python data; ``write_jsquad`` builds that layout at test time (joining title
and text with the loader's ``SEP`` and computing every ``answer_start``), so the repository
holds no JSQuAD-shaped file.

What the wiki tests rely on:

- ``灯台`` comes first and spans several 450/60 chunks; the answer of its question about the
  light used in the early Meiji era (``石油ランプ``) also occurs in its first paragraph, so the
  gold chunk must follow the answer span, not the first occurrence.
- ``和紙`` is a second article longer than one chunk; the others fit one chunk.
- ``渡り鳥`` has a question whose answer is the title, which its text never spells out.
- ``SMALL_TITLES`` (indexed once per session) and ``EXTRA_TITLES`` (added by a rebuild) are
  disjoint; together they make enough chunks for the kill-and-resume build test.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from core.ingest.wikipedia import SEP


@dataclass(frozen=True, slots=True)
class Paragraph:
    text: str
    # (question, answers): every answer is a span of ``text``, or the article title
    qas: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True, slots=True)
class FixtureArticle:
    title: str
    paragraphs: tuple[Paragraph, ...]


def _p(text: str, *qas: tuple[str, str | tuple[str, ...]]) -> Paragraph:
    return Paragraph(text, tuple((q, (a,) if isinstance(a, str) else a) for q, a in qas))


ARTICLES: tuple[FixtureArticle, ...] = (
    FixtureArticle(
        "灯台",
        (
            _p(
                "灯台は、夜間や霧のときに船が自分の位置を知り、岩礁や浅瀬を避けられるように、"
                "海岸や島に建てられる光の塔である。古くは岬の上でたき火をしたり、油を燃やす"
                "石油ランプをつるしたりして合図にしていた。現在の灯台は電気の光源と大きなレンズを"
                "組み合わせ、決まった間隔で光を点滅させている。",
                ("灯台が建てられるのはどのような場所か", "海岸や島"),
            ),
            _p(
                "灯台の光り方は一つ一つ異なり、これを灯質という。例えば、十秒ごとに一回光るもの、"
                "白と赤の光を交互に出すもの、三回続けて光ったあと長く暗くなるものがある。船の"
                "航海士は海図に書かれた灯質と実際の光を見比べ、見えている灯台がどれなのかを"
                "確かめる。光の届く距離は光達距離と呼ばれ、大きな灯台では三十キロメートルを超える"
                "こともある。",
                ("灯台ごとに異なる光り方を何というか", "灯質"),
                ("灯台の光が届く距離を何と呼ぶか", "光達距離"),
            ),
            _p(
                "レンズには、同心円状の段を刻んで薄く軽くしたフレネルレンズが広く使われてきた。"
                "フランスの物理学者オーギュスタン・フレネルが十九世紀の初めに考案したもので、"
                "普通のレンズと同じ働きをしながら、ずっと少ないガラスで作ることができる。大型の"
                "灯台では、人の背丈よりも高いレンズが台の上でゆっくり回転し、遠くまで光の束を"
                "送っている。",
                (
                    "フレネルレンズを考案した物理学者は誰か",
                    ("オーギュスタン・フレネル", "フレネル"),
                ),
            ),
            _p(
                "日本で西洋式の灯台が建てられ始めたのは明治の初めである。開国によって外国船の"
                "往来が増え、各地の港の近くに灯台が必要になった。当時は海外から技師が招かれ、"
                "れんがや石を積んで塔を造った。明治の初めの灯台では石油ランプが灯されていたところ"
                "も多く、灯台守と呼ばれる職員が夜通し火の番をした。",
                ("明治の初めの灯台で灯されていた明かりは何か", "石油ランプ"),
                ("灯台守と呼ばれた職員は夜通し何をしたか", "火の番"),
            ),
            _p(
                "灯台守は家族とともに灯台のそばの官舎に住み、レンズを磨き、燃料を運び、天気を"
                "記録した。離島や岬の先端にある灯台では、食料や水を船で届けてもらう暮らしが"
                "続いた。やがて光源が電気に変わり、遠くから監視できる仕組みが整うと、灯台は人が"
                "いなくても動くようになった。日本では二〇〇六年に最後の有人灯台が無人化された。",
                ("日本で最後の有人灯台が無人化されたのは何年か", "二〇〇六年"),
            ),
            _p(
                "役目を終えた古い灯台の中には、建物として価値が認められ、文化財として保存されて"
                "いるものもある。らせん階段を上って展望台まで登れる灯台は観光地になり、海を"
                "見渡す景色を楽しむ人が訪れる。一方で、衛星を使った測位が普及した今も、灯台は"
                "電波が使えないときの大切な目印として海の安全を支えている。",
                ("衛星測位が普及した今、灯台はどのようなときの目印になるか", "電波が使えないとき"),
            ),
        ),
    ),
    FixtureArticle(
        "和紙",
        (
            _p(
                "和紙は、日本で古くから作られてきた手すきの紙である。主な原料は楮（こうぞ）、"
                "三椏（みつまた）、雁皮（がんぴ）といった木の皮の繊維で、長い繊維が絡み合うため"
                "薄くても破れにくい。障子や襖、書道の紙、お札の原料にも使われてきた。",
                ("和紙が薄くても破れにくいのはなぜか", "長い繊維が絡み合うため"),
            ),
            _p(
                "作り方は、刈り取った枝を蒸して皮をはぎ、煮て柔らかくした繊維を細かくたたき"
                "ほぐすところから始まる。これを水に入れ、トロロアオイの根から取った粘りのある液を"
                "加えてかき混ぜる。すき舟と呼ばれる水槽から簀桁（すけた）で液をすくい、前後左右に"
                "揺すって繊維を均一に広げる。この方法を流しずきという。",
                ("和紙作りで粘りのある液を取る植物は何か", "トロロアオイ"),
                ("簀桁で液をすくい、揺すって繊維を広げる方法を何というか", "流しずき"),
            ),
            _p(
                "すき上げた紙は重ねて水を絞り、板に一枚ずつ張って天日で乾かす。冬の冷たい水を"
                "使うと繊維が締まり、質のよい紙になるといわれ、寒い時期が作業の盛りとされてきた。"
                "二〇一四年には、いくつかの産地の手すき和紙の技術がユネスコの無形文化遺産に"
                "登録された。",
                ("手すき和紙の技術が無形文化遺産に登録されたのは何年か", "二〇一四年"),
            ),
            _p(
                "和紙は丈夫で長持ちするため、古い文書や絵画の修復にも用いられる。海外の美術館"
                "でも、破れた紙の裏打ちや欠けた部分の補修に日本の薄い和紙が使われている。産地"
                "ごとに原料や厚さ、色合いに特徴があり、越前、美濃、土佐などがよく知られている。",
                ("丈夫で長持ちする和紙は何に用いられるか", "古い文書や絵画の修復"),
            ),
        ),
    ),
    FixtureArticle(
        "渡り鳥",
        (
            _p(
                "季節の移り変わりに合わせて、ひなを育てる土地と冬を越す土地のあいだを長い距離に"
                "わたって移動する鳥の総称。日本ではツバメが春に南から来て夏に子育てをし、"
                "ハクチョウやマガモは秋に北から来て冬を過ごす。",
                (
                    "季節に合わせて、ひなを育てる土地と冬を越す土地を行き来する鳥を何と呼ぶか",
                    "渡り鳥",
                ),
                ("春に南から来て夏に子育てをする鳥の例は何か", "ツバメ"),
            ),
            _p(
                "移動の道筋は毎年ほぼ同じで、星や太陽の位置、地磁気を手がかりにしていると"
                "考えられている。足に番号入りの輪を付けて放す標識調査によって、移動の経路や"
                "寿命が調べられてきた。",
                ("鳥の足に番号入りの輪を付けて放す調査を何というか", "標識調査"),
            ),
        ),
    ),
    FixtureArticle(
        "風鈴",
        (
            _p(
                "風鈴は、夏に軒下や窓辺につるして風で鳴らす小さな鈴である。金属やガラス、陶器で"
                "作られ、内側につるした舌（ぜつ）に短冊が付いている。短冊が風を受けて舌が揺れると、"
                "澄んだ音が鳴る。",
                ("風鈴の舌に付いていて風を受けるものは何か", "短冊"),
            ),
            _p(
                "ガラスの風鈴は江戸時代の後期に広まり、職人が息を吹き込んで一つずつ形を作った。"
                "鉄で作られた南部風鈴は余韻の長い音で知られ、岩手県の名産品になっている。音を"
                "聞くと涼しく感じるため、暑い季節の風物詩とされる。",
                ("ガラスの風鈴が広まったのはいつか", "江戸時代の後期"),
                ("余韻の長い音で知られる鉄の風鈴は何か", "南部風鈴"),
            ),
        ),
    ),
    FixtureArticle(
        "羊羹",
        (
            _p(
                "羊羹は、小豆のあんに砂糖と寒天を加えて練り固めた和菓子である。寒天を煮溶かして"
                "作る練り羊羹のほか、水分を多くして柔らかく仕上げた水羊羹、小麦粉を混ぜて蒸した"
                "蒸し羊羹がある。もとは中国の羊肉の汁物を指す言葉で、肉を食べない禅僧が小豆などで"
                "見立てて作ったのが始まりとされる。",
                ("羊羹を固めるために加えるものは何か", "寒天"),
                ("水分を多くして柔らかく仕上げた羊羹を何というか", "水羊羹"),
                ("羊羹という言葉はもともと何を指していたか", "中国の羊肉の汁物"),
            ),
        ),
    ),
    FixtureArticle(
        "日時計",
        (
            _p(
                "日時計は、太陽が作る影の向きで時刻を知る道具である。水平な文字盤に、ノーモンと"
                "呼ばれる影を落とす棒や板を立てて使う。ノーモンを地軸と平行に傾けると、季節が"
                "変わっても同じ目盛りで時刻を読むことができる。",
                ("日時計で影を落とす棒や板を何と呼ぶか", "ノーモン"),
                ("ノーモンを何と平行に傾けると季節によらず同じ目盛りで読めるか", "地軸"),
            ),
            _p(
                "日時計が示すのはその土地の太陽の位置に基づく時刻で、時計の標準時とは最大で"
                "およそ十六分ずれる。このずれを均時差という。",
                ("日時計の時刻と標準時とのずれを何というか", "均時差"),
            ),
        ),
    ),
    FixtureArticle(
        "潮汐",
        (
            _p(
                "潮汐は、海面が一日におよそ二回ずつ高くなったり低くなったりする現象である。主に"
                "月の引力によって起こり、太陽の引力も加わる。海面が最も高くなった状態を満潮、"
                "最も低くなった状態を干潮という。新月と満月のころは月と太陽の力が重なって差が"
                "大きくなり、これを大潮と呼ぶ。",
                ("海面が最も低くなった状態を何というか", "干潮"),
                ("潮の満ち引きを起こす主な原因は何か", "月の引力"),
                ("新月や満月のころに満ち引きの差が大きくなることを何と呼ぶか", "大潮"),
            ),
        ),
    ),
    FixtureArticle(
        "点字",
        (
            _p(
                "点字は、指先で触れて読む文字である。縦に三つ、横に二列の六つの点の組み合わせで"
                "一つの文字を表す。フランスのルイ・ブライユが十九世紀に考案した方式がもとになり、"
                "日本では石川倉次が五十音に合う点字を作り、一八九〇年に採用された。",
                ("点字の一文字はいくつの点の組み合わせで表すか", "六つ"),
                ("五十音に合う日本の点字を作ったのは誰か", "石川倉次"),
                ("点字のもとになった方式を考案したのは誰か", "ルイ・ブライユ"),
            ),
        ),
    ),
    FixtureArticle(
        "風車",
        (
            _p(
                "風車は、風の力で羽根を回し、その回転を仕事に変える装置である。かつては穀物を"
                "ひく粉ひきや、低い土地から水をくみ出す排水に使われた。オランダでは干拓地の水を"
                "運河へくみ上げるため、数多くの風車が建てられた。現在は発電機を回す風力発電が"
                "主な用途となっている。",
                (
                    "オランダで多くの風車が建てられたのは何のためか",
                    "干拓地の水を運河へくみ上げるため",
                ),
                ("現在の風車の主な用途は何か", "風力発電"),
            ),
        ),
    ),
    FixtureArticle(
        "こたつ",
        (
            _p(
                "こたつは、低い机の下に熱源を置き、上から布団を掛けて足元を温める日本の暖房器具"
                "である。古くは床を掘り下げた場所に炭火を入れる掘りごたつが使われ、昭和の中ごろ"
                "からは天板の裏に電気の発熱体を付けたものが広まった。",
                ("床を掘り下げて炭火を入れるこたつを何というか", "掘りごたつ"),
                ("こたつの机の上から掛けるものは何か", "布団"),
            ),
        ),
    ),
    # --- not in SMALL_TITLES: added to a built index by the rebuild tests ---
    FixtureArticle(
        "鍾乳洞",
        (
            _p(
                "鍾乳洞は、石灰岩の地層が雨水や地下水に溶かされてできた洞窟である。二酸化炭素を"
                "含んだ水は石灰岩を少しずつ溶かし、長い年月をかけて大きな空間を作る。天井から"
                "したたる水に溶けた成分が再び固まると、つららのような鍾乳石や、床から伸びる石筍"
                "ができる。",
                ("鍾乳洞ができる岩石は何か", "石灰岩"),
                ("洞窟の床から上に伸びる石を何というか", "石筍"),
            ),
        ),
    ),
    FixtureArticle(
        "凧揚げ",
        (
            _p(
                "凧揚げは、竹の骨組みに紙や布を張った凧を、糸で操って空に揚げる遊びである。日本"
                "では正月の遊びとして親しまれ、各地に武者絵や文字を描いた凧が伝わる。風を受ける"
                "面の角度と糸を引く力のつり合いによって、凧は空中にとどまる。",
                ("日本で凧揚げはいつの遊びとして親しまれてきたか", "正月"),
            ),
        ),
    ),
    FixtureArticle(
        "養蜂",
        (
            _p(
                "養蜂は、ミツバチを飼って蜂蜜や蜜ろうを採る仕事である。巣箱の中には取り外せる"
                "巣枠が並び、働き蜂が集めた花の蜜を巣房にためて濃縮する。養蜂家は花の咲く時期に"
                "合わせて巣箱を移動させることもあり、これを移動養蜂という。",
                ("花の咲く時期に合わせて巣箱を移すことを何というか", "移動養蜂"),
            ),
            _p(
                "ミツバチは花から花へ花粉を運ぶため、果樹や野菜の受粉にも欠かせない。イチゴや"
                "メロンを育てるハウスでは、受粉のために巣箱を借りて中に置くことがある。",
                ("受粉のためにハウスで巣箱を置く作物の例は何か", ("イチゴ", "イチゴやメロン")),
            ),
        ),
    ),
)

TITLES = [a.title for a in ARTICLES]
EXTRA_TITLES = ["鍾乳洞", "凧揚げ", "養蜂"]
# Indexed once per session: ten articles, two of them longer than one chunk.
SMALL_TITLES = [t for t in TITLES if t not in EXTRA_TITLES]


def _answer_start(article: FixtureArticle, paragraph: Paragraph, answer: str) -> int:
    """Offset of ``answer`` in the context ``title + SEP + text``; 0 when it is the title."""
    found = paragraph.text.find(answer)
    if found >= 0:
        return len(article.title) + len(SEP) + found
    if answer == article.title:
        return 0
    raise ValueError(f"fixture: answer {answer!r} is not in its paragraph of {article.title!r}")


def jsquad_data(titles: list[str] | None = None) -> dict:
    """The fixture (or the articles ``titles``, in fixture order) in the JSQuAD v1.3 layout."""
    wanted = set(TITLES if titles is None else titles)
    unknown = wanted - set(TITLES)
    if unknown:
        raise ValueError(f"fixture: no article titled {sorted(unknown)}")
    data = []
    for a_num, article in enumerate(ARTICLES):
        if article.title not in wanted:
            continue
        paragraphs = []
        for p_num, paragraph in enumerate(article.paragraphs):
            qas = [
                {
                    "question": question,
                    "id": f"fx{a_num}p{p_num}q{q_num}",
                    "answers": [
                        {"text": a, "answer_start": _answer_start(article, paragraph, a)}
                        for a in answers
                    ],
                    "is_impossible": False,
                }
                for q_num, (question, answers) in enumerate(paragraph.qas)
            ]
            paragraphs.append({"context": article.title + SEP + paragraph.text, "qas": qas})
        data.append({"title": article.title, "paragraphs": paragraphs})
    return {"version": "v1.3-fixture", "data": data}


def write_jsquad(path: Path, titles: list[str] | None = None) -> Path:
    """Write the fixture (or the articles ``titles``) to ``path`` as JSQuAD-format JSON."""
    path.write_text(json.dumps(jsquad_data(titles), ensure_ascii=False), "utf-8")
    return path


def question_count(titles: list[str] | None = None) -> int:
    wanted = set(TITLES if titles is None else titles)
    return sum(len(p.qas) for a in ARTICLES if a.title in wanted for p in a.paragraphs)
