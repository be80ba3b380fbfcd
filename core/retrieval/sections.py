"""The whole section a chunk comes from, as it was when an answer cited it.

A section is the run of consecutive chunks of one document that share the cited chunk's heading
path (chunk windows never cross a heading, so the run is the section's body). For the live
version of the document the text is cut from the stored document text, from the run's first
start to its last end, so it reads exactly as the source; for an older version (the document
changed or was removed after the answer) the run is rebuilt from the chunk history, where the
chunks' bodies are joined by their shared overlap.

A very long section (a document without headings) is shown around the cited chunk, up to
``MAX_SECTION_CHARS`` characters.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.retrieval.store import ChunkStore

MAX_SECTION_CHARS = 12_000
_MIN_OVERLAP = 5


@dataclass(frozen=True, slots=True)
class SectionView:
    """What 「全文を表示」 opens for a citation."""

    text: str | None  # None when neither the version cited nor its chunks are known
    heading: str
    chunk_count: int  # chunks merged into ``text``
    truncated: bool  # the section is longer than MAX_SECTION_CHARS: only the part around it
    changed: bool  # the document's content hash differs from the one the answer used
    removed: bool  # the document is no longer indexed


def _window(run: list[int], center: int, length) -> list[int]:
    """The part of ``run`` around ``center`` whose chunks add up to at most MAX_SECTION_CHARS."""
    low = high = run.index(center)
    total = length(center)
    grew = True
    while grew:
        grew = False
        if high + 1 < len(run) and total + length(run[high + 1]) <= MAX_SECTION_CHARS:
            high += 1
            total += length(run[high])
            grew = True
        if low > 0 and total + length(run[low - 1]) <= MAX_SECTION_CHARS:
            low -= 1
            total += length(run[low])
            grew = True
    return run[low : high + 1]


def _merge(first: str, second: str) -> str:
    """Two consecutive chunk bodies joined by the longest suffix of one that starts the other."""
    for k in range(min(len(first), len(second)), _MIN_OVERLAP - 1, -1):
        if first.endswith(second[:k]):
            return first + second[k:]
    return first + "\n" + second


def _live_section(store: ChunkStore, chunk_id: str, doc_hash: str) -> SectionView | None:
    found = store.chunks_by_id([chunk_id]).get(chunk_id)
    if found is None or found.chunk.doc_hash != doc_hash:
        return None
    cited = found.chunk
    document = store.document(cited.doc_id)
    if document is None:
        return None
    chunks = [s.chunk for s in store.document_chunks(cited.doc_id)]
    position = next(i for i, c in enumerate(chunks) if c.chunk_id == chunk_id)
    first = last = position
    while first > 0 and chunks[first - 1].heading_path == cited.heading_path:
        first -= 1
    while last + 1 < len(chunks) and chunks[last + 1].heading_path == cited.heading_path:
        last += 1
    run = list(range(first, last + 1))
    total = chunks[last].end - chunks[first].start
    truncated = total > MAX_SECTION_CHARS
    if truncated:
        run = _window(run, position, lambda i: chunks[i].end - chunks[i].start)
    text = document.text[chunks[run[0]].start : chunks[run[-1]].end]
    return SectionView(text, cited.heading, len(run), truncated, changed=False, removed=False)


def _history_section(store: ChunkStore, chunk_id: str, doc_hash: str) -> SectionView | None:
    cited = store.chunk_version(chunk_id, doc_hash)
    if cited is None:
        return None
    source, heading, body = cited
    prefix, _, index_text = chunk_id.rpartition("_")
    if not index_text.isdigit():
        return SectionView(body, heading, 1, False, changed=False, removed=False)
    index = int(index_text)
    bodies = {index: body}
    for step in (-1, 1):
        n = index + step
        total = len(body)
        while n >= 0 and total <= MAX_SECTION_CHARS:
            version = store.chunk_version(f"{prefix}_{n}", doc_hash)
            if version is None or version[0] != source or version[1] != heading:
                break
            if total + len(version[2]) > MAX_SECTION_CHARS:
                break
            bodies[n] = version[2]
            total += len(version[2])
            n += step
    order = sorted(bodies)
    text = bodies[order[0]]
    for n in order[1:]:
        text = _merge(text, bodies[n])
    return SectionView(text, heading, len(order), False, changed=False, removed=False)


def section_view(store: ChunkStore, chunk_id: str, file: str, doc_hash: str) -> SectionView:
    """The section of ``chunk_id`` as it was under ``doc_hash`` (see the module docstring)."""
    current = store.manifest().get(file)
    changed = current is not None and current != doc_hash
    removed = current is None
    view = None if (changed or removed) else _live_section(store, chunk_id, doc_hash)
    if view is None:
        view = _history_section(store, chunk_id, doc_hash)
    if view is None:
        return SectionView(None, "", 0, False, changed=changed, removed=removed)
    return SectionView(view.text, view.heading, view.chunk_count, view.truncated, changed, removed)
