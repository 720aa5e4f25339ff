"""The contextual utility's strategies, as classes (as LanceDB's rerankers are).

A Pack's settings name one of each (``settings.context.prior``, ``settings.context.kernel``);
:data:`PRIORS` and :data:`KERNELS` turn the stored name into the object that does the
work, so no caller switches on a string. ``docs/contextual.md`` has the measurements that
chose the defaults.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, Protocol

import numpy as np
from numpy.typing import NDArray

from packs.learning.kernel import Kernel


class Strategy(ABC):
    """A named strategy; two of the same class are equal (settings compare by value)."""

    name: ClassVar[str]

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self).__name__)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Prior(Strategy):
    """What a memory's ``U(m | q)`` shrinks toward, for queries unlike its history."""

    @abstractmethod
    def __call__(self, global_q: float, helped: bool, broad: bool) -> float:
        """The prior of a memory with global utility ``global_q``; ``helped``: it earned a
        positive (non-intrinsic) reward once; ``broad``: it failed for several distinct
        queries (a hub)."""


class NeverHelpedPrior(Prior):
    """``min(Q, 0)`` only for a memory that never helped and failed broadly (a hub): a
    memory that helped some query, or failed for one or two, is judged on similar queries
    only. The default (measured against the other two, docs/contextual.md)."""

    name = "never-helped"

    def __call__(self, global_q: float, helped: bool, broad: bool) -> float:
        return min(global_q, 0.0) if not helped and broad else 0.0


class NegativePrior(Prior):
    """``min(Q, 0)``: only evidence against a memory transfers to unlike queries."""

    name = "negative"

    def __call__(self, global_q: float, helped: bool, broad: bool) -> float:
        return min(global_q, 0.0)


class GlobalPrior(Prior):
    """The global Q itself (plain MemRL transfer: positive evidence leaks too)."""

    name = "global"

    def __call__(self, global_q: float, helped: bool, broad: bool) -> float:
        return global_q


class FittedKernels(Protocol):
    """Where a calibrated kernel comes from (``ContextIndex.kernel``)."""

    def kernel(self, theta: float, failures: bool = True) -> Kernel: ...


class TransferKernel(Strategy):
    """How much a past reward for query ``q_e`` counts for query ``q``, by their cosine."""

    @abstractmethod
    def weights(
        self,
        cosines: NDArray[np.floating],
        rewards: NDArray[np.floating],
        theta: float,
        fitted: FittedKernels,
    ) -> NDArray[np.float64]:
        """The weight of each past reward (before the reward's own weight)."""

    @abstractmethod
    def kappa(self, kappa: float, theta: float) -> float:
        """The shrinkage pseudo-weight on this kernel's scale."""


class HingeKernel(TransferKernel):
    """``max(0, cos - theta)`` (issue 8's kernel; the default)."""

    name = "hinge"

    def weights(
        self,
        cosines: NDArray[np.floating],
        rewards: NDArray[np.floating],
        theta: float,
        fitted: FittedKernels,
    ) -> NDArray[np.float64]:
        return np.maximum(0.0, cosines - theta)

    def kappa(self, kappa: float, theta: float) -> float:
        return kappa


class CalibratedKernel(TransferKernel):
    """Measured on the Pack's own reward pairs, shrunk toward the hinge
    (``packs/learning/kernel.py``); ``failures=False`` measures only how successes
    transfer and keeps the hinge for failures."""

    name = "calibrated"
    failures = True

    def weights(
        self,
        cosines: NDArray[np.floating],
        rewards: NDArray[np.floating],
        theta: float,
        fitted: FittedKernels,
    ) -> NDArray[np.float64]:
        return fitted.kernel(theta, failures=self.failures).weights(cosines, rewards)

    def kappa(self, kappa: float, theta: float) -> float:
        # The calibrated kernel is 1 at cos 1 where the hinge is 1 - theta: kappa is
        # rescaled so that without evidence both rank alike.
        return kappa / (1.0 - theta)


class CalibratedSuccessesKernel(CalibratedKernel):
    """Successes transfer by the measured kernel, failures by the hinge."""

    name = "calibrated-successes"
    failures = False


PRIORS: dict[str, Prior] = {p.name: p for p in (NeverHelpedPrior(), NegativePrior(), GlobalPrior())}
KERNELS: dict[str, TransferKernel] = {
    k.name: k for k in (HingeKernel(), CalibratedKernel(), CalibratedSuccessesKernel())
}
