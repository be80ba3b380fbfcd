"""Wikipedia QA internals: the index (build, status), the dev set (make-dev, eval) and the CLI.

``qa`` is the pipeline (``ask``), ``search`` the retrieval it uses.
"""
