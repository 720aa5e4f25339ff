"""A Pack as a LangChain retriever: ``WolfieRetriever(pack=..., k=..., scope=...)``.

Needs the ``langchain`` extra (``langchain-core``). Each ``invoke`` is a Wolfie recall:
Documents ranked by similarity, learned utility and lesson confidence, each carrying its
id, kind, score, track record and the ``episode_id`` in its metadata. Reward the episode
once the outcome is known, and the Pack ranks better next time::

    retriever = WolfieRetriever(pack="journal", k=3, scope="alice")
    docs = retriever.invoke("missed the breakout, chase it?")
    ...
    retriever.feedback(docs, 1.0)  # +1 helped .. -1 misled
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ConfigDict, Field, PrivateAttr

from packs.extras import missing_extra
from packs.pack import Pack
from packs.records import FeedbackResult
from wolfie.integrations.ranked import PackRanker, episode_of, item_metadata, item_text

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ModuleNotFoundError as exc:  # a core install: name the extra, as the CLI does
    raise (missing_extra(exc, "wolfie.integrations.langchain") or exc) from None


class WolfieRetriever(BaseRetriever):
    """Wolfie's recall as a LangChain ``BaseRetriever``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    pack: Pack | str = Field(description="An open Pack, or a Pack name (opened on first use).")
    root: str | None = Field(None, description="The Pack root for a name (WOLFIE_ROOT).")
    k: int | None = Field(None, ge=1, le=100, description="Documents to return (k2).")
    scope: str | None = Field(None, description="A user or session: its rows and the shared.")
    filters: dict[str, Any] | None = Field(None, description="Columns or metadata: value(s).")
    log: bool = Field(True, description="Log an episode to reward (False: search only).")
    _ranker: PackRanker | None = PrivateAttr(None)

    @property
    def ranker(self) -> PackRanker:
        if self._ranker is None:
            self._ranker = PackRanker(
                self.pack, self.root, self.k, self.scope, self.filters, self.log
            )
        return self._ranker

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        """``invoke(query, k=1)``: the call's ``k`` wins over the built one (LangChain's
        convention)."""
        found = self.ranker.rank(query, k)
        return [
            Document(
                page_content=item_text(item),
                id=item.id,
                metadata=item_metadata(item, found.episode_id),
            )
            for item in found.items
        ]

    def feedback(
        self,
        documents: str | Iterable[Document],
        rating: float,
        *,
        idempotency_key: str | None = None,
    ) -> FeedbackResult:
        """Reward the episode ``documents`` came from (or an episode id): ``rating`` in
        [-1, 1] moves every memory it injected. A scoped retriever rewards only its
        scope's episodes."""
        episode = episode_of(documents, _metadata)
        return self.ranker.feedback(episode, rating, idempotency_key)


def _metadata(document: Document) -> Mapping[str, Any]:
    return document.metadata
