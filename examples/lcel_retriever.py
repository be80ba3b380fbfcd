"""The workbench's hybrid retriever in a LangChain LCEL chain (offline; an LLM when configured)."""

import sys

from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from core.retrieval.langchain_adapter import WorkbenchRetriever
from core.retrieval.searcher import Searcher
from core.runbooks import index_runbooks, runbook_corpus
from core.settings import get_settings

settings = get_settings()  # WB_RUNBOOKS_DIR, WB_STATE_DIR, OPENAI_API_KEY, ...
index_runbooks(settings)  # incremental: only new or changed files are indexed
retriever = WorkbenchRetriever(searcher=Searcher(runbook_corpus(settings)), k=3)


def format_docs(docs) -> str:
    return "\n\n".join(
        f"[{n}] {d.metadata['file']}\n{d.page_content}" for n, d in enumerate(docs, 1)
    )


chain = retriever | RunnableLambda(format_docs)
if settings.llm_enabled:  # OPENAI_API_KEY or OPENAI_BASE_URL: answer from the passages
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate

    from core.generation.llm import chat_model

    prompt = ChatPromptTemplate.from_template(
        "次の手順書の抜粋だけを根拠に、番号を引用して答えてください。\n\n{context}\n\n質問: {question}"
    )
    chain = (
        {"context": chain, "question": RunnablePassthrough()}
        | prompt
        | chat_model(settings)
        | StrOutputParser()
    )

question = sys.argv[1] if len(sys.argv) > 1 else "フィッシングメールの報告を受けたら"
print(chain.invoke(question))
