"""No single scope can move Pack-wide settings (issue 41): one tenant rating its own
questions at random can't retune the Pack against another tenant."""

from __future__ import annotations

import numpy as np

from packs import KnowledgeChunk, Pack
from packs.embeddings import EmbeddingInfo, EmbeddingProvider, Vectors

TOPICS = 120  # 90 questions of the hostile scope, 30 of the other
HOSTILE = 90
DIM = TOPICS + 1
VECTORS: dict[str, np.ndarray] = {}
for i in range(TOPICS):
    q, a = np.zeros(DIM), np.zeros(DIM)
    q[0], q[1 + i] = 0.4, 1.0
    a[0], a[1 + i] = 0.2, 1.0
    VECTORS[f"question {i}"] = q / np.linalg.norm(q)
    VECTORS[f"answer {i}"] = a / np.linalg.norm(a)


class TopicEmbedder(EmbeddingProvider):
    info = EmbeddingInfo("table", "table", "test:scopes", DIM)

    def _embed_batch(self, texts: list[str]) -> Vectors:
        return np.stack([VECTORS[t] for t in texts]).astype(np.float32)


def test_one_scopes_random_ratings_do_not_retune_the_pack(tmp_path):
    settings = {"k1": 5, "k2": 1, "lexical": "off", "tuning.auto": False}
    with Pack.open("shared", tmp_path, embedder=TopicEmbedder(), settings=settings) as pack:  # type: ignore[arg-type]
        pack.add_knowledge([KnowledgeChunk(f"answer {i}", "facts.md", i) for i in range(TOPICS)])
        for epoch in range(3):
            for i in range(TOPICS):
                scope = "mallory" if i < HOSTILE else "bob"
                recall = pack.recall(f"question {i}", scope=scope)
                if scope == "mallory":  # +1, +1, -1 whatever was shown: contrary rewards
                    pack.feedback(recall.episode_id or "", -1.0 if epoch == 2 else 1.0, scope=scope)
                else:
                    good = recall.items[0].text == f"answer {i}"
                    pack.feedback(recall.episode_id or "", 1.0 if good else -1.0, scope=scope)
        kappa = pack.settings.context.kappa
        report = pack.tuning.tune()
        scopes = report.evidence["scopes"]
        assert set(scopes) == {"mallory", "bob"}
        assert scopes["mallory"]["flip_rate"] > 0.3 > 0.05 > scopes["bob"]["flip_rate"]
        assert "context.kappa" not in report.changes, report.reason
        assert report.comparison is not None
        assert report.comparison["reliability"]["refused_by"] == "bob"
        assert pack.settings.context.kappa == kappa
        bob_answers = sum(
            pack.search(f"question {i}", scope="bob").items[0].text == f"answer {i}"
            for i in range(HOSTILE, TOPICS)
        )
        assert bob_answers == TOPICS - HOSTILE
