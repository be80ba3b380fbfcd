"""Evaluation and KPIs: the runbook-chat evaluation dataset, its runner and judges, and the
readers behind the dashboard (audit logs, interview WAL, evaluation results, question-set runs,
Recall@K results).

- ``dataset``: ``eval/eval_dataset.json`` (design section 7.1), validated on load
- ``checks``: the deterministic expectations of one case
- ``heuristic_judge`` / ``llm_judge``: the six criteria, without or with an LLM
- ``runner`` / ``summary`` / ``results``: a run, its summaries and pass line, its results file
- ``logs`` / ``audit_stats``: fast, tolerant audit-log reading and its KPIs
- ``kpi`` / ``recall`` / ``runs``: interview KPIs, Recall@K results, question-set runs
"""
