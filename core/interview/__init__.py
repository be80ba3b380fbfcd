"""The curiosity-driven interviewer (issue 5; seed design ``interview-agent.md``).

Modules, one concept each, in the order of a turn:

- ``domains`` (the four domains from ``data/interview/domains.yaml``), ``slots``, ``state``
- ``normalizers``, ``answers``, ``parsing``, ``extraction`` (Stage02, offline rules)
- ``fill`` (merge facts, contradictions, filled_ratio, beliefs), ``belief`` (design 10.4)
- ``gap`` (Stage05), ``params`` (``VoIParams``), ``voi`` (VoI_ask / VoI_search / bundles),
  ``adaptation`` (online importance, P(answerable), retrievability and costs, design 10.7 /
  10.8), ``policy`` (PolicyProvider), ``stop`` (two-stage stop), ``evidence`` (the search action)
- ``qgen`` (Stage06), ``qcheck`` + ``similarity`` (Stage07), ``asking`` (act), ``llm``
- ``turnloop`` (one turn), ``orchestrator`` (``Interviewer``: the public API)
- ``store`` (SQLite sessions), ``wal`` (write-ahead log, replay), ``kg`` / ``kg_neo4j``
- ``artifacts`` (the Markdown document), ``kpi``, ``simulator`` (scripted users), ``cli``,
  ``discord_adapter`` (optional)

``from core.interview import Interviewer`` is resolved lazily (no import cost for submodules).
"""

from __future__ import annotations

from typing import Any

__all__ = ["Interviewer", "TurnResult"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from core.interview import orchestrator

        return getattr(orchestrator, name)
    raise AttributeError(name)
