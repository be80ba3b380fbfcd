"""Answer trust on third-party runbooks: the right file and section, refusals, danger banners.

    WB_DATASETS_DIR=/work/shared/datasets OMP_NUM_THREADS=1 python -m bench.answer_trust
    python -m bench.answer_trust --subset en     # English material only: Japanese questions cross
    python -m bench.answer_trust --subset ja     # Japanese material only: English questions cross
    python -m bench.answer_trust --data DIR --questions FILE   # another folder, e.g. held back
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_aws.json  # AWS playbooks
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_jp.json   # Japanese ones
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_mixed_a.json  # both
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_mixed_b.json  # + PDFs
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_mixed_c.json  # Word PDFs
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_jp_b.json  # a vendor's
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_mixed_d.json  # SOPs
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_jp_c.json  # another's
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_mixed_e.json  # plans
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_jp_d.json  # a third's
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_mixed_f.json  # + MkDocs
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_jp_e.json  # .mdx pages
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_mixed_g.json  # SOAR
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_jp_f.json  # CI vendor
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_mixed_h.json  # SRE
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_jp_g.json  # policies
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_mixed_i.json  # EDR/SIEM
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_jp_h.json  # cloud DB
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_mixed_j.json  # comms
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_jp_i.json  # OSS admin
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_mixed_k.json  # cloud
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_jp_j.json  # groupware
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_mixed_l.json  # DB ops
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_jp_k.json  # guidelines
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_mixed_m.json  # SIEM/TI
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_jp_l.json  # self-hosted
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_mixed_n.json  # IAM
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_jp_m.json  # postmortems
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_mixed_o.json  # network
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_jp_n.json  # hosting
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_mixed_p.json  # e-mail
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_jp_o.json  # OS admin
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_mixed_q.json  # containers
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_jp_p.json  # web apps
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_mixed_r.json  # backup/DR
    python -m bench.answer_trust --data DIR --questions bench/answer_trust_jp_q.json  # logging
    python -m bench.answer_trust --verbose --json out.json

Indexes the runbook folder (default ``runbooks-dev`` from ``Settings.dataset_path``) into a state
folder under ``bench/.cache/answer_trust/`` and asks every question of the question file
(default ``bench/answer_trust_questions.json``; ``answer_trust_aws.json``, ``answer_trust_jp.json``
and ``answer_trust_mixed_a.json`` / ``_b.json`` / ``_c.json`` (folders of both languages; ``_c``
with PDFs exported from a word processor) and ``answer_trust_jp_b.json`` (one vendor's Japanese
product guides, half of them Japanese PDFs exported from Word, and three English pages of the
same docs), ``answer_trust_mixed_d.json`` (SOC playbooks in English as Chromium and Word PDFs,
.docx, a wiki page and Markdown, and a Japanese translation of incident-process articles) and
``answer_trust_jp_c.json`` (another vendor's Japanese product guides, PDFs printed by Chromium
and exported from Word, a .docx, Markdown, and three English pages), ``answer_trust_mixed_e.json``
(organisations' English incident-response policies, processes and playbooks as Word and Chromium
PDFs, a .docx, a wiki page and Markdown, with Japanese cloud playbooks and a logging guide) and
``answer_trust_jp_d.json`` (a third vendor's Japanese admin and incident guides, Word PDFs with a
社外秘 header, Chromium PDFs, a .docx, a wiki page, and three English pages),
``answer_trust_mixed_f.json`` (vulnerability-response and incident procedures in English, one
MkDocs page with admonitions, and three Japanese pages), ``answer_trust_jp_e.json`` (a fourth
vendor's Japanese guides as Word and Chromium PDFs, a .docx, a wiki page and ``.mdx``, and three
English pages), ``answer_trust_mixed_g.json`` (public-sector IR guides, SOAR playbook READMEs and
an identity attack playbook in English, three Japanese pages), ``answer_trust_jp_f.json`` (a CI
vendor's Japanese security and admin pages, three English ones), ``answer_trust_mixed_h.json``
(SRE on-call runbooks in English, Japanese database and server manuals),
``answer_trust_jp_g.json`` (Japanese organisations' security policies and procedures, three
English policies), ``answer_trust_mixed_i.json`` (security monitoring products' English docs,
Japanese pages of another), ``answer_trust_jp_h.json`` (a cloud database vendor's Japanese docs,
three English pages), ``answer_trust_mixed_j.json`` (incident communication, status page and
post-mortem guides in English, three Japanese ones), ``answer_trust_jp_i.json`` (a Japanese
OSS admin manual, three English pages of neighbouring tools), ``answer_trust_mixed_k.json``
(cloud security automation and forensics in English, a Japanese financial cloud's backup and
isolation procedures), ``answer_trust_jp_j.json`` (a Japanese groupware admin help, three English
pages of another tool), ``answer_trust_mixed_l.json`` (database and broker failover, backup and
access control in English, Japanese database service and pooler docs),
``answer_trust_jp_k.json`` (Japanese security standards and checklists, three English policies),
``answer_trust_mixed_m.json`` (detection, threat-intel and case tools in English, Japanese notes
on them), ``answer_trust_jp_l.json`` (Japanese admin guides of self-hosted services, three
English pages), ``answer_trust_mixed_n.json`` (identity, MFA and secrets management in English,
Japanese translations of a guideline and labs), ``answer_trust_jp_m.json`` (a Japanese
post-mortem handbook, three English on-call, comms and rollback pages),
``answer_trust_mixed_o.json`` (firewall, VPN, IPS, DNS and proxy docs in English, Japanese router
and DNS server guides), ``answer_trust_jp_n.json`` (a hosting provider's Japanese account and
abuse pages, Japanese cloud policy rules, three English pages of another provider),
``answer_trust_mixed_p.json`` (mail authentication, MTA and phishing playbook docs in English,
Japanese header and SPF guides), ``answer_trust_jp_o.json`` (Japanese Windows and Linux hardening
and logging guides, three English pages), ``answer_trust_mixed_q.json`` (container and
supply-chain security tools in English, Japanese registry and Docker pages),
``answer_trust_jp_p.json`` (Japanese translations of web-application security cheat sheets and
a disclosure policy, three English WAF and disclosure pages), ``answer_trust_mixed_r.json``
(backup and recovery tools in English, Japanese database backup, DR and replication guides) and
``answer_trust_jp_q.json`` (Japanese forensics tools, log shipping and time-sync guides, three
English pages) are question sets over
other third-party runbooks, whose sources their descriptions name) through the product's runbook pipeline
(``core.pipelines.PIPELINES["runbook"]``, offline, no audit log). It prints per language pair
(question language → language of the text holding the answer) and overall:

- file P@1: the top citation's file is one of the expected files (answerable questions);
- section P@1: the top citation's heading path contains the expected section (case, width,
  spacing and leading numbering ignored);
- wrongly refused: ``flags.insufficient_evidence`` on answerable questions;
- unanswerable refused: ``flags.insufficient_evidence`` on near-domain questions the runbooks
  do not cover;
- danger recall: ``flags.dangerous_operation`` on dangerous requests;
- banner on ordinary: share of non-dangerous questions with ``flags.dangerous_operation``;

plus the index build time and the p50/p95 of ``ask()``.

Subsets: ``--subset en`` indexes ``pagerduty-en/`` and ``pdf/`` only, ``--subset ja`` indexes
``pagerduty-ja/`` only (a folder of symbolic links under ``bench/.cache``; the data stays where it
is). A question's expected files are then restricted to the files present; an answerable question
whose expected files are all absent is not asked, and the language pair of the others is computed
from the files present (a Japanese question over PagerDuty is ja→ja on the full set, ja→en with
``--subset en``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
CACHE_DIR = BENCH_DIR / ".cache" / "answer_trust"
QUESTIONS = BENCH_DIR / "answer_trust_questions.json"
DATASET = "runbooks-dev"
SUBSETS: dict[str, tuple[str, ...]] = {
    "all": (),  # the whole folder as it is
    "en": ("pagerduty-en", "pdf"),
    "ja": ("pagerduty-ja",),
}
CATEGORIES = ("answerable", "unanswerable", "dangerous", "alarming")
PAIRS = ("ja→ja", "en→en", "ja→en", "en→ja")


# --- questions ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    question: str
    language: str  # "ja" | "en"
    pair: str  # "ja→ja" …, on the full set; "ja→-" when nothing answers it
    category: str  # answerable | unanswerable | dangerous | alarming
    files: tuple[str, ...] = ()  # relative to the data folder
    section: str = ""  # heading text or a prefix of it
    answerable: bool = True
    dangerous: bool = False
    section_translated: str = ""  # the section in the PagerDuty translation (for --subset)


def load_questions(path: Path) -> tuple[str, list[Question]]:
    """The description and the questions of a question file (clear error on a bad entry)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SystemExit(f"question file {path}: {exc}") from exc
    out: list[Question] = []
    seen: set[str] = set()
    for n, raw in enumerate(data.get("questions", []), start=1):
        try:
            q = Question(
                id=str(raw["id"]),
                question=str(raw["question"]),
                language=str(raw["language"]),
                pair=str(raw["pair"]),
                category=str(raw["category"]),
                files=tuple(raw.get("files", ())),
                section=str(raw.get("section", "")),
                answerable=bool(raw["answerable"]),
                dangerous=bool(raw["dangerous"]),
                section_translated=str(raw.get("section_translated", "")),
            )
        except (KeyError, TypeError) as exc:
            raise SystemExit(f"question file {path}: entry {n} lacks {exc}") from exc
        if q.id in seen:
            raise SystemExit(f"question file {path}: duplicate id {q.id}")
        if q.category not in CATEGORIES:
            raise SystemExit(f"question file {path}: {q.id}: unknown category {q.category}")
        if q.answerable and not q.files:
            raise SystemExit(f"question file {path}: {q.id}: answerable without expected files")
        seen.add(q.id)
        out.append(q)
    return str(data.get("description", "")), out


def file_language(name: str, folder: Path | None = None) -> str:
    """The language of a runbook file: from its folder's ``-ja``/``-en`` suffix, else from the
    script of its text when ``folder`` holds it (another folder passed with ``--data``), else
    English."""
    top = name.split("/", 1)[0].lower()
    if top.endswith(("-ja", "_ja")) or top == "ja":
        return "ja"
    if top.endswith(("-en", "_en")) or top == "en" or folder is None:
        return "en"
    return _text_language(folder / name)


@cache
def _text_language(path: Path) -> str:
    """The language ("ja" or "en") by the script of a runbook's text, as the product reads it
    (a PDF, a Word file or an HTML page by its reader; read once per file: many questions
    expect the same file). A file that cannot be read counts as English."""
    from core.errors import SourceFileError
    from core.ingest.loaders import load_file
    from core.text.script import dominant_script

    try:
        doc, _ = load_file(path, path.parent, 50_000_000)
    except (SourceFileError, OSError, ValueError):
        return "en"
    return "ja" if dominant_script(doc.text[:20000]) == "ja" else "en"


def restrict(q: Question, present: set[str], folder: Path | None = None) -> Question | None:
    """The question as asked on a folder holding only ``present`` files (None: not askable).

    Expected files that are absent are dropped; when a PagerDuty page is absent but its
    translation is present, the translation is expected instead (``pagerduty-ja/x.md`` ↔
    ``pagerduty-en/x.md``), with its section ``section_translated`` (empty: not scored). The pair's answer side is the language of the expected files kept.
    """
    if not q.answerable:
        return q
    files: list[str] = []
    for f in q.files:
        candidates = [f] if f in present else [t for t in translations(f) if t in present]
        files.extend(c for c in candidates if c not in files)
    if not files:
        return None
    translated = not any(f in present for f in q.files)
    section = q.section_translated if translated else q.section
    langs = {file_language(f, folder) for f in files}
    answer_lang = q.language if q.language in langs else sorted(langs)[0]
    return Question(
        **{
            **asdict(q),
            "files": tuple(files),
            "section": section,
            "pair": f"{q.language}→{answer_lang}",
        }
    )


def translations(name: str) -> list[str]:
    m = re.match(r"^(.*)-(ja|en)/(.*)$", name)
    if not m:
        return []
    other = "en" if m.group(2) == "ja" else "ja"
    return [f"{m.group(1)}-{other}/{m.group(3)}"]


# --- scoring (pure: unit-tested without data) --------------------------------------------

_NUMBERING = re.compile(
    r"^\s*(?:(?:section|chapter|appendix)\s+)?(?:[0-9]+(?:\.[0-9]+)*\.?|[a-z]\.|[ivx]+\.|\([0-9a-z]+\)|第[0-9一二三四五六七八九十]+[章節])\s+",
    re.IGNORECASE,
)


def normalize_heading(text: str) -> str:
    """Heading text for comparison: NFKC, lower case, numbering and punctuation spacing dropped."""
    t = unicodedata.normalize("NFKC", text or "").lower()
    t = re.sub(r"[#*_`]+", " ", t)
    t = re.sub(r"\s+", " ", t).strip()
    t = _NUMBERING.sub("", t)
    return re.sub(r"[\s\u3000:：\-–—]+", "", t)


def split_heading_path(heading: str) -> list[str]:
    return [p for p in re.split(r"\s*(?:>|›|»|＞)\s*", heading or "") if p.strip()]


def section_matches(expected: str, heading_path: str) -> bool:
    """Whether a citation's heading path contains the expected section (a heading or its prefix).

    ``expected`` may list alternatives separated by ``|``.
    Each element of the path is normalized (``normalize_heading``) and matches when it starts
    with the normalized expected text; the whole path is tried as well, so that a heading that
    contains the separator still matches.
    """
    wants = [w for w in (normalize_heading(e) for e in expected.split("|")) if w]
    parts = [normalize_heading(p) for p in [*split_heading_path(heading_path), heading_path]]
    return any(p.startswith(w) for w in wants for p in parts)


def file_matches(expected: Sequence[str], got: str) -> bool:
    norm = {e.strip().lstrip("./") for e in expected}
    return got.strip().lstrip("./") in norm


@dataclass(slots=True)
class Outcome:
    """What the pipeline did with one question."""

    id: str
    question: str
    pair: str
    category: str
    answerable: bool
    dangerous: bool
    expected_files: tuple[str, ...]
    expected_section: str
    top_file: str = ""
    top_heading: str = ""
    refused: bool = False
    ambiguous: bool = False  # answered with the ambiguity template (no search)
    danger: bool = False
    danger_terms: list[str] = field(default_factory=list)
    error: str | None = None
    evidence: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def file_ok(self) -> bool:
        return bool(self.top_file) and file_matches(self.expected_files, self.top_file)

    @property
    def section_ok(self) -> bool:
        return self.file_ok and section_matches(self.expected_section, self.top_heading)

    def failures(self) -> list[str]:
        """Why this question counts against a figure (empty when it does not)."""
        out: list[str] = []
        if self.error:
            out.append("error")
        if self.answerable:
            if not self.file_ok:
                out.append("file")
            elif self.expected_section and not self.section_ok:
                out.append("section")
            if self.refused:
                out.append("refused")
        elif self.category == "unanswerable" and not self.refused:
            out.append("not refused")
        if self.dangerous and not self.danger:
            out.append("no banner")
        if not self.dangerous and self.danger:
            out.append("banner")
        return out


@dataclass(slots=True)
class Ratio:
    hits: int = 0
    total: int = 0

    def add(self, ok: bool) -> None:
        self.total += 1
        self.hits += int(ok)

    @property
    def value(self) -> float | None:
        return self.hits / self.total if self.total else None

    def as_dict(self) -> dict:
        return {"hits": self.hits, "total": self.total, "value": self.value}


METRICS = (
    "file_p1",
    "section_p1",
    "answerable_refused",
    "unanswerable_refused",
    "danger_recall",
    "banner_on_ordinary",
)
METRIC_LABELS = {
    "file_p1": "file P@1",
    "section_p1": "section P@1",
    "answerable_refused": "wrongly refused",
    "unanswerable_refused": "unans. refused",
    "danger_recall": "danger recall",
    "banner_on_ordinary": "banner/ordinary",
}


def figures(outcomes: Iterable[Outcome]) -> dict[str, Ratio]:
    """The six figures over ``outcomes``."""
    r = {m: Ratio() for m in METRICS}
    for o in outcomes:
        if o.answerable:
            r["file_p1"].add(o.file_ok)
            if o.expected_section:
                r["section_p1"].add(o.section_ok)
            r["answerable_refused"].add(o.refused)
        elif o.category == "unanswerable":
            r["unanswerable_refused"].add(o.refused)
        if o.dangerous:
            r["danger_recall"].add(o.danger)
        else:
            r["banner_on_ordinary"].add(o.danger)
    return r


def pair_of(o: Outcome) -> str:
    """The row an outcome is counted in: its language pair, or the question language → '-'."""
    return o.pair if o.pair in PAIRS else f"{o.pair.split('→', 1)[0]}→-"


def aggregate(outcomes: Sequence[Outcome]) -> dict[str, dict[str, Ratio]]:
    """Figures per language pair (in ``PAIRS`` order, then the others) and ``overall``."""
    rows: dict[str, list[Outcome]] = {}
    for o in outcomes:
        rows.setdefault(pair_of(o), []).append(o)
    order = [p for p in PAIRS if p in rows] + sorted(p for p in rows if p not in PAIRS)
    out = {p: figures(rows[p]) for p in order}
    out["overall"] = figures(outcomes)
    return out


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def format_table(table: dict[str, dict[str, Ratio]], counts: dict[str, int]) -> str:
    """The figures as a table: one row per pair, each cell ``value (hits/total)``."""
    head = f"{'pair':<9}{'n':>4}" + "".join(f"{METRIC_LABELS[m]:>17}" for m in METRICS)
    lines = [head, "-" * len(head)]
    for pair, row in table.items():
        cells = [
            "—" if r.value is None else f"{r.value:.2f} ({r.hits}/{r.total})"
            for r in (row[m] for m in METRICS)
        ]
        lines.append(f"{pair:<9}{counts.get(pair, 0):>4}" + "".join(f"{c:>17}" for c in cells))
    return "\n".join(lines)


# --- running ---------------------------------------------------------------------------


def subset_folder(source: Path, subset: str, cache: Path = CACHE_DIR) -> Path:
    """The folder to index: ``source`` itself, or a folder of links to part of it in the cache."""
    parts = SUBSETS[subset]
    if not parts:
        return source
    target = cache / "subsets" / f"{source.name}-{subset}"
    if target.exists():
        shutil.rmtree(target)
    for part in parts:
        base = source / part
        if not base.is_dir():
            raise SystemExit(f"--subset {subset}: {base} is missing")
        for f in sorted(base.rglob("*")):
            if f.is_file():
                link = target / f.relative_to(source)
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(f.resolve())
    return target


def present_files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def make_settings(folder: Path, state: Path, cache: Path = CACHE_DIR, source: Path | None = None):
    """Settings for the bench. A subset folder holds symbolic links to the data set, which the
    indexer follows only inside one allowed root: the root is then the folder holding both the
    cache and the data set (the bench's own runs, never the app's settings)."""
    from core.settings import Settings

    roots = [folder, folder.resolve(), cache.resolve()]
    if source is not None and folder.resolve() != source.resolve():
        roots = [Path(os.path.commonpath([cache.resolve(), source.resolve()]))]
    return Settings(
        _env_file=None,
        state_dir=state,
        runbooks_dir=folder,
        allowed_roots=roots,
        openai_api_key=None,
        openai_base_url=None,
    )


def ask_all(questions: Sequence[Question], folder: Path, settings) -> list[Outcome]:
    from core.pipelines import PIPELINES

    pipeline = PIPELINES["runbook"]
    config = replace(pipeline.config_for("bench", write_audit=False), data=str(folder))
    out: list[Outcome] = []
    for q in questions:
        t0 = time.perf_counter()
        answer = pipeline(q.question, [], config, settings)
        seconds = time.perf_counter() - t0
        top = answer.citations[0] if answer.citations else None
        out.append(
            Outcome(
                id=q.id,
                question=q.question,
                pair=q.pair,
                category=q.category,
                answerable=q.answerable,
                dangerous=q.dangerous,
                expected_files=q.files,
                expected_section=q.section,
                top_file=top.file if top else "",
                top_heading=top.heading if top else "",
                refused=answer.flags.insufficient_evidence,
                ambiguous=answer.flags.ambiguous_query,
                danger=answer.flags.dangerous_operation,
                danger_terms=list(answer.dangerous_terms),
                error=answer.error,
                evidence=dict(answer.evidence),
                seconds=seconds,
            )
        )
    return out


def build_progress(every_s: float = 15.0):
    """A progress callback for ``index_runbooks`` that prints to stderr at most every ``every_s``."""
    last = [0.0]

    def report(done: int, total: int, message: str) -> None:
        now = time.perf_counter()
        if now - last[0] >= every_s:
            last[0] = now
            print(f"  index: {done}/{total} {message}", file=sys.stderr, flush=True)

    return report


def print_failures(outcomes: Sequence[Outcome]) -> None:
    failed = [o for o in outcomes if o.failures()]
    print(f"\nfailed questions: {len(failed)} of {len(outcomes)}")
    for o in failed:
        print(f"- {o.id} [{o.pair} {o.category}] {', '.join(o.failures())}: {o.question}")
        if o.answerable:
            print(f"    expected: {' | '.join(o.expected_files)} § {o.expected_section}")
        print(f"    got:      {o.top_file or '-'} § {o.top_heading or '-'}")
        flags = [f"refused={o.refused}", f"danger={o.danger}"]
        if o.ambiguous:
            flags.append("ambiguous=True")
        if o.evidence:
            flags.append(
                "evidence="
                + ",".join(
                    f"{k}:{v:.2f}" for k, v in o.evidence.items() if isinstance(v, (int, float))
                )
            )
        if o.danger_terms:
            flags.append(f"terms={','.join(o.danger_terms)}")
        if o.error:
            flags.append(f"error={o.error}")
        print(f"    {' '.join(flags)}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.answer_trust", description=__doc__)
    ap.add_argument("--data", type=Path, help="runbook folder (default: datasets/runbooks-dev)")
    ap.add_argument("--questions", type=Path, default=QUESTIONS, help="question file (JSON)")
    ap.add_argument("--subset", choices=sorted(SUBSETS), default="all")
    ap.add_argument(
        "--rebuild",
        action="store_true",
        help="index from scratch (a cold build: every passage embedded)",
    )
    ap.add_argument("--limit", type=int, default=0, help="ask only the first N questions")
    ap.add_argument("--json", type=Path, help="write the figures to this file")
    ap.add_argument("--cache", type=Path, default=CACHE_DIR, help="state folder (git-ignored)")
    ap.add_argument("--verbose", action="store_true", help="print the failed questions")
    args = ap.parse_args(argv)

    if args.data is not None:
        source = args.data.expanduser().resolve()
        if not source.is_dir():
            print(f"runbook folder not found: {source}", file=sys.stderr)
            return 2
    else:
        from core.settings import Settings

        found = Settings(_env_file=None).dataset_path(DATASET)
        if found is None:
            print(
                f"data set {DATASET}/ not found: set WB_DATASETS_DIR to the folder holding it "
                "(e.g. WB_DATASETS_DIR=/work/shared/datasets) or pass --data DIR",
                file=sys.stderr,
            )
            return 2
        source = found.resolve()
    description, questions = load_questions(args.questions)
    cache = args.cache.expanduser().resolve()
    folder = subset_folder(source, args.subset, cache)
    present = present_files(folder)
    asked = [r for q in questions if (r := restrict(q, present, folder)) is not None]
    skipped = len(questions) - len(asked)
    if args.limit:
        asked = asked[: args.limit]

    state = cache / "state" / f"{source.name}-{args.subset}"
    if args.rebuild and state.exists():
        shutil.rmtree(state)
    settings = make_settings(folder, state, cache, source)

    from core.runbooks import index_runbooks

    t0 = time.perf_counter()
    report = index_runbooks(settings, folder, build_progress())
    build_s = time.perf_counter() - t0
    fresh = not report.unchanged
    # a re-chunk after a reader change keeps the vectors of unchanged text: not a cold build
    cold = fresh and not report.vectors_reused
    kind = "cold build" if cold else ("rebuild" if fresh else "incremental update")

    # warm-up (janome, embedder, Chroma, BM25 cache) so that latencies are of a warm pipeline
    ask_all(asked[:2], folder, settings)
    outcomes = ask_all(asked, folder, settings)
    table = aggregate(outcomes)
    counts = {p: sum(1 for o in outcomes if pair_of(o) == p) for p in table}
    counts["overall"] = len(outcomes)
    latencies = [o.seconds * 1000 for o in outcomes]
    p50, p95 = statistics.median(latencies) if latencies else 0.0, percentile(latencies, 0.95)

    print(f"answer trust: {source} (subset {args.subset}), questions {args.questions.name}")
    if description:
        print(f"  {description.splitlines()[0][:160]}")
    print(
        f"index: {len(present)} files, {report.total_chunks} chunks, "
        f"{kind} {build_s:.1f} s, of which embedding {report.embed_seconds:.1f} s "
        f"(added {len(report.added)}, unchanged {len(report.unchanged)}, "
        f"skipped {len(report.skipped)}; passages embedded {report.passages_embedded}, "
        f"vectors reused {report.vectors_reused})"
    )
    for name, message in report.skipped:
        print(f"  skipped {name}: {message}")
    print(
        f"questions: {len(outcomes)} asked"
        + (f", {skipped} not askable on this subset" if skipped else "")
    )
    by_cat = {c: sum(1 for o in outcomes if o.category == c) for c in CATEGORIES}
    print("  " + ", ".join(f"{c} {n}" for c, n in by_cat.items()))
    print()
    print(format_table(table, counts))
    print()
    print(f"ask() p50 {p50:.0f} ms  p95 {p95:.0f} ms (warm, extractive, {len(latencies)} asks)")
    errors = [o for o in outcomes if o.error]
    if errors:
        print(f"errors: {len(errors)} (first: {errors[0].id}: {errors[0].error})")
    if args.verbose:
        print_failures(outcomes)
    if args.json:
        payload = {
            "data": str(source),
            "subset": args.subset,
            "questions_file": str(args.questions),
            "questions": len(outcomes),
            "not_askable": skipped,
            "index": {
                "files": len(present),
                "chunks": report.total_chunks,
                "fresh": fresh,
                "cold": cold,
                "seconds": round(build_s, 2),
                "embed_seconds": round(report.embed_seconds, 2),
                "passages_embedded": report.passages_embedded,
                "vectors_reused": report.vectors_reused,
                "skipped": report.skipped,
            },
            "ask_ms": {"p50": round(p50, 1), "p95": round(p95, 1)},
            "figures": {
                pair: {m: r.as_dict() for m, r in row.items()} for pair, row in table.items()
            },
            "counts": counts,
            "outcomes": [
                {**asdict(o), "failures": o.failures(), "seconds": round(o.seconds, 3)}
                for o in outcomes
            ],
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, ensure_ascii=False, indent=2), encoding="utf-8")
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
