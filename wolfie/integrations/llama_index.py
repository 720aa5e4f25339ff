"""A Pack as a LlamaIndex retriever: ``WolfieRetriever(pack=..., k=..., scope=...)``.

Needs the ``llama-index`` extra (``llama-index-core``). Each ``retrieve`` is a Wolfie
recall: ``NodeWithScore`` items (the Wolfie score, higher is better) whose nodes carry
the item's id, kind, track record and the ``episode_id`` in their metadata. Reward the
episode once the outcome is known::

    retriever = WolfieRetriever(pack="journal", k=3)
    nodes = retriever.retrieve("missed the breakout, chase it?")
    retriever.feedback(nodes, 1.0)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from packs.extras import missing_extra
from packs.pack import Pack
from packs.records import FeedbackResult
from wolfie.integrations.ranked import PackRanker, episode_of, item_metadata, item_text

try:
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ModuleNotFoundError as exc:  # a core install: name the extra, as the CLI does
    raise (missing_extra(exc, "wolfie.integrations.llama_index") or exc) from None


class WolfieRetriever(BaseRetriever):
    """Wolfie's recall as a LlamaIndex ``BaseRetriever``."""

    def __init__(
        self,
        pack: Pack | str,
        *,
        root: str | None = None,
        k: int | None = None,
        scope: str | None = None,
        filters: Mapping[str, Any] | None = None,
        log: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.ranker = PackRanker(pack, root, k, scope, filters, log)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        found = self.ranker.rank(query_bundle.query_str)
        return [
            NodeWithScore(
                node=TextNode(
                    id_=item.id,
                    text=item_text(item),
                    metadata=item_metadata(item, found.episode_id),
                ),
                score=item.score,
            )
            for item in found.items
        ]

    def feedback(
        self,
        nodes: str | Iterable[NodeWithScore],
        rating: float,
        *,
        idempotency_key: str | None = None,
    ) -> FeedbackResult:
        """Reward the episode ``nodes`` came from (or an episode id)."""
        episode = episode_of(nodes, _metadata)
        return self.ranker.feedback(episode, rating, idempotency_key)


def _metadata(node: NodeWithScore) -> Mapping[str, Any]:
    return node.node.metadata
