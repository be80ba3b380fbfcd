"""Question sets: the frozen ``customized_question_set.json`` contract, Golden Question Pools,
generation for one ordinance, running a set against a RAG pipeline, and comparing runs.

Modules: ``contract`` (validation, canonical export, atomic save) with ``jsonfile`` (strict
reading, canonical bytes, atomic writes) and ``metadata_rules`` (no verdicts in metadata);
``draft`` (the editor's lenient draft) and ``editing`` (the editor's state: opening, replacing,
routing issues to fields, the export check); ``golden`` (pools frozen by checksum) and
``generation`` (a set for one ordinance); ``targets`` (what a set runs against); ``runner`` (run
files); ``diff`` (run-to-run comparison); ``cli`` (``python -m core qset``).
"""
