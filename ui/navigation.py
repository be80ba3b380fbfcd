"""The pages of the workbench, in menu order (the home page links to the same list), and the
role each needs (``core.access``): the menu shows a principal only their pages; the others stay
routable but hidden, and the page's own guard (``ui.auth.require``) refuses them."""

from dataclasses import dataclass

from core.access import Principal


@dataclass(frozen=True)
class PageInfo:
    path: str
    title: str
    icon: str
    description: str = ""
    default: bool = False
    role: str = "operator"  # the lowest role that may open the page


PAGES = [
    PageInfo("views/home.py", "ホーム", "🏠", default=True),
    PageInfo(
        "views/runbook_chat.py",
        "手順書チャット",
        "📘",
        "インシデント対応手順書に質問し、引用元付きの回答を得る",
    ),
    PageInfo(
        "views/wiki_qa.py",
        "Wikipedia QA",
        "📚",
        "日本語 Wikipedia に質問し、参照番号付きの回答を得る",
    ),
    PageInfo(
        "views/interview.py",
        "インタビュー",
        "🗣️",
        "聞き取りで手順書・ポストモーテム・レシピ・業務報告を作成",
    ),
    PageInfo(
        "views/question_sets.py",
        "質問セット",
        "📝",
        "customized_question_set.json の作成・検証・生成・実行・比較",
        role="reviewer",
    ),
    PageInfo(
        "views/dashboard.py",
        "ダッシュボード",
        "📊",
        "監査ログ・評価結果・Recall@K・インタビュー KPI・質問セット実行の可視化",
        role="reviewer",
    ),
]


def pages_for(principal: Principal) -> list[PageInfo]:
    """The pages ``principal`` may open, in menu order."""
    return [p for p in PAGES if principal.allows(p.role)]
