"""Wikipedia QA internals: the index (build, status), the dev set (make-dev, eval) and the CLI.

Pages and other callers use the pipeline module ``core.wiki_qa``.
"""
